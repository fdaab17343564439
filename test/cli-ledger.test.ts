import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { fixture } from './support/executors.ts';
import {
  openaiChunks as c,
  openaiTextReply,
  startOpenAIWireServer,
  type OpenAIWireServer,
} from './support/openai-wire-server.ts';

// Each test runs the CLI (TypeScript through tsx, tools compiled on start) and gives it 60 s; with a CPU burner
// beside the suite a run took over the default 30 s. The failures these tests catch are not slow ones.
vi.setConfig({ testTimeout: 120_000 });

// toolpool run --ledger <file> --run-id <id>: a re-run of a run does not repeat its calls.
const bin = fileURLToPath(new URL('../bin/toolpool.js', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const hasSqlite = (major === 22 && minor >= 13) || (major === 23 && minor >= 4) || major >= 24;

function toolpool(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

let server: OpenAIWireServer;
let folder: string;
beforeAll(async () => {
  server = await startOpenAIWireServer();
  folder = await mkdtemp(join(tmpdir(), 'toolpool-cli-ledger-'));
});
afterAll(async () => {
  await server?.close();
  await rm(folder, { recursive: true, force: true });
});

describe('toolpool run --ledger', () => {
  test.skipIf(!hasSqlite)(
    'the same run id run again: the call is answered from the ledger file, not run a second time',
    async () => {
      const log = join(folder, 'charges.log');
      const db = join(folder, 'calls.db');
      const args = [
        'run',
        '--tools',
        fixture('ledger/charge.ts'),
        '--model',
        'openai:gpt-test',
        '--base-url',
        server.origin,
        '--ledger',
        db,
        '--run-id',
        'job-1',
        '-q',
        'charge 5',
      ];
      for (let attempt = 0; attempt < 2; attempt++) {
        server.enqueue({
          kind: 'stream',
          chunks: [
            c.role(),
            c.toolCallStart(0, 'call_1', 'charge'),
            c.toolCallArgs(0, JSON.stringify({ amount: 5, log })),
            c.finish('tool_calls'),
          ],
        });
        server.enqueue(openaiTextReply(['Charged.']));
        const { code, stdout, stderr } = await toolpool(args);
        expect(code, stderr).toBe(0);
        expect(stdout).toBe('Charged.\n');
        const sent = server.requests.at(-1)!.body as { messages: Array<Record<string, unknown>> };
        expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'charged 5' });
      }
      expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    },
    180_000,
  );

  test.skipIf(hasSqlite)(
    'on a Node without node:sqlite: a one-line error naming the Node it needs',
    async () => {
      const { code, stderr } = await toolpool([
        'run',
        '--model',
        'openai:gpt-test',
        '--base-url',
        server.origin,
        '--ledger',
        join(folder, 'x.db'),
        'hi',
      ]);
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^toolpool: --ledger .*x\.db: sqliteLedger needs node:sqlite, which Node \S+ does not have: use Node 22\.13 or later/,
      );
      expect(existsSync(join(folder, 'x.db'))).toBe(false);
    },
    120_000,
  );
});
