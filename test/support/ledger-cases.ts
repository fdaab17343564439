/**
 * The cross-process cases of a shared ledger, run against each store
 * (test/ledger-sqlite.test.ts, test/adapters/bullmq-ledger.test.ts): hosts
 * are child processes running test/support/ledger-host.ts, and the charge
 * tool appends a line to a log file each time it runs, so runs are counted
 * across processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  Agent,
  createExecutor,
  scriptedModel,
  type Ledger,
  type ToolEndEvent,
  type ToolResultMessage,
} from '../../src/index.ts';
import { fixture, textOf } from './executors.ts';

/** Each case starts host processes (tsx, a fresh executor): generous on a loaded machine. */
const SLOW = 180_000;

const hostScript = fileURLToPath(new URL('./ledger-host.ts', import.meta.url));

interface HostOutput {
  results: ToolResultMessage[];
  replayed: Record<string, boolean>;
  pid: number;
}

const children: ChildProcess[] = [];

function startHost(config: Record<string, unknown>): { child: ChildProcess; output: Promise<HostOutput> } {
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const output = new Promise<HostOutput>((resolve, reject) => {
    child.on('exit', (code, signal) => {
      if (code === 0) resolve(JSON.parse(stdout) as HostOutput);
      else reject(new Error(`host exited with ${code ?? signal}\n${stderr}`));
    });
  });
  output.catch(() => undefined);
  return { child, output };
}

const runs = (log: string): { key: string; pid: number }[] =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Defines the tests. `ledger()` gives the host's `ledger` argument
 * ('sqlite:<file>' or 'redis:<url>') for a test, `open(spec)` the same
 * ledger in this process.
 */
export function ledgerCases(ledger: () => string, open: (spec: string) => Ledger): void {
  let folder: string;
  let n = 0;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'toolpool-ledger-'));
  }, SLOW);
  afterAll(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  }, SLOW);
  const fresh = () => {
    n++;
    return { log: join(folder, `runs-${n}.log`), runId: `run-${n}-${process.pid}` };
  };

  test(
    'a host SIGKILLed mid-call: a second host on the same ledger does not run it again, and its error says so',
    async () => {
      const { log, runId } = fresh();
      const spec = ledger();
      const calls = [{ id: 'c1', name: 'charge', arguments: { amount: 5, log, holdMs: 120_000 } }];
      const first = startHost({ ledger: spec, tool: 'charge', runId, calls });
      await until(() => runs(log).length === 1, 'the first host to start the call');
      first.child.kill('SIGKILL');
      await expect(first.output).rejects.toThrow(/SIGKILL/);
      const second = await startHost({ ledger: spec, tool: 'charge', runId, calls }).output;
      expect(runs(log)).toHaveLength(1);
      expect(second.results[0]!.isError).toBe(true);
      expect(textOf(second.results[0]!)).toMatch(
        new RegExp(
          `^Not run again: this call of "charge" \\(run "${runId}", call "c1"\\) started at \\S+ on \\S+:${first.child.pid} and its end was never recorded: it may already have run`,
        ),
      );
    },
    SLOW,
  );

  test(
    'a call that ended is answered from the ledger in a new process, without running',
    async () => {
      const { log, runId } = fresh();
      const spec = ledger();
      const calls = [{ id: 'c1', name: 'charge', arguments: { amount: 7, log } }];
      const first = await startHost({ ledger: spec, tool: 'charge', runId, calls }).output;
      const second = await startHost({ ledger: spec, tool: 'charge', runId, calls }).output;
      expect(runs(log)).toEqual([{ key: `${runId}:c1`, amount: 7, pid: first.pid }]);
      expect(first.replayed).toEqual({ c1: false });
      expect(second.replayed).toEqual({ c1: true });
      expect(second.results[0]).toMatchObject({
        isError: false,
        content: first.results[0]!.content,
        details: first.results[0]!.details,
      });
    },
    SLOW,
  );

  test(
    'an idempotent tool (annotations.idempotentHint) whose host died mid-call runs again',
    async () => {
      const { log, runId } = fresh();
      const spec = ledger();
      const release = join(folder, `release-${n}`);
      const calls = [{ id: 'c1', name: 'charge', arguments: { amount: 5, log, holdUntil: release } }];
      const first = startHost({ ledger: spec, tool: 'charge-idempotent', runId, calls });
      await until(() => runs(log).length === 1, 'the first host to start the call');
      first.child.kill('SIGKILL');
      await first.output.catch(() => undefined);
      writeFileSync(release, '');
      const second = await startHost({ ledger: spec, tool: 'charge-idempotent', runId, calls }).output;
      expect(second.results[0]!.isError).toBe(false);
      expect(runs(log)).toHaveLength(2);
    },
    SLOW,
  );

  test(
    'two host processes racing one key: exactly one runs it, the other is told it may already have run',
    async () => {
      const { log, runId } = fresh();
      const spec = ledger();
      const go = join(folder, `go-${n}`);
      const calls = [{ id: 'c1', name: 'charge', arguments: { amount: 9, log, holdMs: 3_000 } }];
      const ready = [join(folder, `ready-${n}-a`), join(folder, `ready-${n}-b`)];
      const hosts = ready.map((file) => startHost({ ledger: spec, tool: 'charge', runId, calls, ready: file, go }));
      // Both hosts are up, with their executors made, before either starts the batch.
      await until(() => ready.every((file) => existsSync(file)), 'both hosts to be ready');
      writeFileSync(go, '');
      const outputs = await Promise.all(hosts.map((host) => host.output));
      expect(runs(log)).toHaveLength(1);
      const texts = outputs.map((output) => textOf(output.results[0]!));
      expect(texts.filter((text) => text === 'charged 9')).toHaveLength(1);
      expect(texts.filter((text) => /^Not run again: .* it may already have run/.test(text))).toHaveLength(1);
    },
    SLOW,
  );

  test(
    'a snapshot replayed in another process after its approved call ran does not run it again',
    async () => {
      const { log } = fresh();
      const spec = ledger();
      const secret = 'the host secret';
      const local = open(spec);
      const executor = await createExecutor({ tools: [fixture('ledger/charge.ts')], ledger: local });
      try {
        const model = scriptedModel([
          { text: 'charging', toolCalls: [{ id: 'big', name: 'charge', arguments: { amount: 500, log } }] },
          { text: 'done' },
        ]);
        const agent = new Agent({ model, executor, snapshotSecret: secret });
        await agent.prompt('charge 500');
        expect(agent.pendingApprovals.map((call) => call.toolCallId)).toEqual(['big']);
        // Stored while the payment had not run yet.
        const stored = join(folder, `snapshot-${n}.json`);
        writeFileSync(stored, JSON.stringify(agent.snapshot()));
        await agent.resume({ approved: ['big'] });
        expect(runs(log)).toHaveLength(1);

        const replay = await startHost({ ledger: spec, tool: 'charge', snapshot: stored, secret, approved: ['big'] })
          .output;
        expect(runs(log)).toHaveLength(1);
        expect(replay.replayed).toEqual({ big: true });
        expect(textOf(replay.results[0]!)).toBe('charged 500');
        // Unsigned, the approval does not survive: the call waits for a person again (and still would not run twice).
        const unsigned = JSON.parse(readFileSync(stored, 'utf8'));
        delete unsigned.integrity;
        writeFileSync(stored, JSON.stringify(unsigned));
        const again = await startHost({ ledger: spec, tool: 'charge', snapshot: stored, approved: ['big'] }).output;
        expect(again.replayed).toEqual({ big: true });
        expect(runs(log)).toHaveLength(1);
      } finally {
        await executor.close();
        await local.close?.();
      }
    },
    SLOW,
  );

  test(
    'tool_end of a replayed call in this process carries replayed: true',
    async () => {
      const { log, runId } = fresh();
      const local = open(ledger());
      const executor = await createExecutor({ tools: [fixture('ledger/charge.ts')], ledger: local });
      try {
        const ends: ToolEndEvent[] = [];
        executor.subscribe((event) => void (event.type === 'tool_end' && ends.push(event)));
        const calls = [{ id: 'c1', name: 'charge', arguments: { amount: 1, log } }];
        await executor.executeBatch(calls, { runId });
        await executor.executeBatch(calls, { runId });
        expect(ends.map((event) => event.replayed === true)).toEqual([false, true]);
        expect(runs(log)).toHaveLength(1);
      } finally {
        await executor.close();
        await local.close?.();
      }
    },
    SLOW,
  );
}
