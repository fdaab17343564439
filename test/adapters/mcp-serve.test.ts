import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PIXEL } from '../fixtures/served/picture.ts';
import { eventually } from '../support/leaks.ts';
import {
  bin,
  cpuDuring,
  cpuSeconds,
  root,
  SERVED_TOOLS,
  serveOverHttp,
  serveOverStdio,
  type ServedClient,
} from '../support/mcp-serve.ts';

type Content = Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
const textOf = (result: object) => (result as { content: Content }).content.map((part) => part.text ?? '').join('');

describe.each([
  ['stdio', serveOverStdio],
  ['Streamable HTTP', serveOverHttp],
])('toolpool serve over %s, driven by the MCP SDK client', (_transport, start) => {
  let served: ServedClient;
  beforeAll(async () => {
    served = await start(SERVED_TOOLS);
  });
  afterAll(() => served?.close());

  test('tools/list: every tool with its description, JSON schema and label as title', async () => {
    const { tools } = await served.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'calculator',
      'flaky',
      'hash',
      'meet',
      'picture',
      'read_file',
      'spin',
      'write_file',
    ]);
    const hash = tools.find((tool) => tool.name === 'hash')!;
    expect(hash).toMatchObject({
      title: 'Hash (stretched)',
      description: expect.stringContaining('Hash a text'),
      inputSchema: { type: 'object', required: ['text', 'rounds'], properties: { rounds: { type: 'integer' } } },
    });
    expect(tools.find((tool) => tool.name === 'spin')!.title).toBeUndefined();
  });

  test('tools/list: annotations and outputSchema from defineTool; tools/call: details as structuredContent', async () => {
    const { tools } = await served.client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('write_file')!.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(byName.get('hash')).toMatchObject({
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      outputSchema: { type: 'object', properties: { digest: { type: 'string', pattern: '^[0-9a-f]+$' } } },
    });
    const result = await served.client.callTool({
      name: 'hash',
      arguments: { text: 'x', rounds: 2, progressSteps: 0 },
    });
    expect(result.structuredContent).toEqual({ algorithm: 'sha256', rounds: 2, digest: textOf(result) });
  });

  test('a tool with needsApproval, called by a client without elicitation, is an error result saying what the client lacks', async () => {
    const result = await served.client.callTool({
      name: 'write_file',
      arguments: { path: 'never-written.txt', text: 'x' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(
      '"write_file" needs a person\'s approval, and the MCP client "toolpool-test" cannot ask for it',
    );
    expect(existsSync(join(root, 'never-written.txt'))).toBe(false);
  });

  test('tools/call runs the tool, with the arguments coerced ("1" -> 1)', async () => {
    const result = await served.client.callTool({
      name: 'calculator',
      arguments: { expression: '10 / 4', precision: '1' },
    });
    expect(result.isError).toBe(false);
    expect(textOf(result)).toBe('10 / 4 = 2.5');
  });

  test('text and image parts become MCP text and image content', async () => {
    const result = await served.client.callTool({ name: 'picture', arguments: {} });
    expect(result.content).toEqual([
      { type: 'text', text: 'one red pixel' },
      { type: 'image', data: PIXEL, mimeType: 'image/png' },
    ]);
  });

  test('a validation failure is an isError result naming the field; the tool does not run', async () => {
    const result = await served.client.callTool({ name: 'calculator', arguments: { precision: 2 } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Validation failed for tool "calculator":[\s\S]*expression/);
  });

  test('a thrown error and a crashed worker are isError results; the server goes on', async () => {
    const thrown = await served.client.callTool({ name: 'flaky', arguments: { mode: 'throw' } });
    expect(thrown).toMatchObject({ isError: true });
    expect(textOf(thrown)).toContain('503 Service Unavailable');
    const crashed = await served.client.callTool({ name: 'flaky', arguments: { mode: 'crash' } });
    expect(crashed).toMatchObject({ isError: true });
    expect(textOf(crashed)).toBe('Tool crashed: its worker exited with code 1 (process.exit or a fatal error).');
    const after = await served.client.callTool({ name: 'flaky', arguments: { mode: 'ok' } });
    expect(after).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'the flaky service answered 200 OK' }],
    });
  });

  test('with a progressToken, each ctx.onUpdate arrives as notifications/progress before the result', async () => {
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const result = await served.client.callTool(
      { name: 'hash', arguments: { text: 'x', rounds: 50_000, progressSteps: 5 } },
      undefined,
      {
        onprogress: (notification) => void progress.push(notification),
      },
    );
    expect(textOf(result)).toMatch(/^[0-9a-f]{64}$/);
    // The SDK client runs notification handlers a microtask late but handles a response at once, so
    // when the last notification and the result arrive in one read it drops that notification
    // ("unknown token"). The server's order on the wire is checked exactly in mcp-serve-process.test.ts.
    expect(progress.length).toBeGreaterThanOrEqual(4);
    // hash reports details.percent: MCP progress of a total of 100.
    expect(progress).toEqual(
      [20, 40, 60, 80, 100]
        .map((percent) => ({ progress: percent, total: 100, message: `${percent}%` }))
        .slice(0, progress.length),
    );
  });

  test('two calls arriving together run at the same time (each meets the other)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpool-meet-'));
    try {
      const [a, b] = await Promise.all(
        ['a', 'b'].map((who) => served.client.callTool({ name: 'meet', arguments: { dir, who, count: 2 } })),
      );
      expect(textOf(a!)).toBe('a met a,b');
      expect(textOf(b!)).toBe('b met a,b');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('notifications/cancelled stops a busy loop that ignores its signal: killed after the grace period, CPU released', async () => {
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const call = served.client.callTool({ name: 'spin', arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: () => started(),
    });
    await running;
    // The loop burns CPU (however little of a core a busy machine gives it) ...
    const base = cpuSeconds(served.pid);
    expect(
      await eventually(
        () => cpuSeconds(served.pid) - base,
        (used) => used >= 0.3,
        15_000,
      ),
    ).toBeGreaterThanOrEqual(0.3);
    controller.abort();
    await expect(call).rejects.toThrow(/abort/i);
    const log = await eventually(served.stderr, (text) => text.includes('✗ spin'), 10_000);
    expect(log).toMatch(
      /✗ spin \d+ ms: Tool call aborted: the tool ignored its signal and was killed after the grace period\./,
    );
    // ... and once it is killed the server is idle again (after the spin module's pool has started its replacement worker,
    // which costs a tenth of a second of CPU once; a loop still running would never get there).
    let idle = Infinity;
    for (let tries = 0; tries < 10 && idle >= 0.05; tries++) idle = await cpuDuring(served.pid, 500);
    expect(idle).toBeLessThan(0.05);
    const next = await served.client.callTool({ name: 'calculator', arguments: { expression: '6 * 7' } });
    expect(textOf(next)).toBe('6 * 7 = 42');
  });
});

describe.each([
  ['stdio', serveOverStdio],
  ['Streamable HTTP', serveOverHttp],
])('toolpool serve over %s: needsApproval asks a client with elicitation', (_transport, start) => {
  test.each([
    ['accept', true],
    ['decline', false],
  ] as const)('%s: write_file runs only when the person accepts', async (action, writes) => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpool-approve-'));
    const served = await start(['--tools', 'tools/write-file.ts', '--tool-options', JSON.stringify({ root: dir })], {
      capabilities: { elicitation: { form: {} } },
    });
    const questions: string[] = [];
    served.client.setRequestHandler(ElicitRequestSchema, (request): ElicitResult => {
      questions.push(request.params.message);
      return action === 'accept' ? { action, content: {} } : { action };
    });
    try {
      const result = await served.client.callTool({
        name: 'write_file',
        arguments: { path: 'note.txt', text: 'hello' },
      });
      expect(questions).toEqual([
        'Allow the tool "Write file" (write_file) to run with these arguments?\n{\n  "path": "note.txt",\n  "text": "hello"\n}',
      ]);
      if (writes) {
        expect(textOf(result)).toBe('Wrote 5 bytes to note.txt.');
        expect(await readFile(join(dir, 'note.txt'), 'utf8')).toBe('hello');
      } else {
        expect(result.isError).toBe(true);
        expect(textOf(result)).toBe(
          'Not run: a person rejected this call of "write_file" (declined in the MCP client "toolpool-test").',
        );
        expect(existsSync(join(dir, 'note.txt'))).toBe(false);
      }
    } finally {
      await served.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a Claude Desktop style launch', () => {
  test('started from another folder, with absolute paths and only the environment such clients pass, it serves', async () => {
    // No `env`: the SDK then passes only a few safe variables (HOME, PATH, ...), as desktop clients do.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        bin,
        'serve',
        '--tools',
        join(root, 'tools', 'calculator.ts'),
        '--isolation',
        'worker',
        '--timeout-ms',
        '5000',
      ],
      cwd: tmpdir(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'desktop-like', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['calculator']);
      expect(textOf(await client.callTool({ name: 'calculator', arguments: { expression: '3 * 3' } }))).toBe(
        '3 * 3 = 9',
      );
    } finally {
      await client.close();
    }
  });
});
