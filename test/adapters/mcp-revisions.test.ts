/**
 * `toolpool serve` speaks the MCP 2026-07-28 revision (through the MCP SDK
 * v2's own era handling) as well as the 2025 revisions the SDK 1.x clients
 * use, on one endpoint: an SDK 2.x client pinned to 2026-07-28, a 2.x
 * client in 'auto' mode and a 1.x client, over HTTP (in process) and over
 * stdio (`toolpool serve`, one child).
 */
import { Type } from '@sinclair/typebox';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serveOverHttp, type McpHttpHost } from '../../src/adapters/mcp/index.ts';
import { createExecutor, defineTool, type Executor, type ToolResult } from '../../src/index.ts';
import { deferred } from '../support/executors.ts';
import { bin, root } from '../support/mcp-serve.ts';
import { recordWireProgress } from '../support/wire-progress.ts';

const count = defineTool({
  name: 'count',
  description: 'Counts to n, with progress',
  parameters: Type.Object({ n: Type.Integer({ minimum: 1, maximum: 10 }) }),
  execute: ({ n }, ctx) => {
    for (let i = 1; i <= n; i++)
      ctx.onUpdate({ content: [{ type: 'text', text: `${i}/${n}` }], details: { progress: i, total: n } });
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  },
});
const fail = defineTool({
  name: 'fail',
  description: 'Throws',
  parameters: Type.Object({}),
  execute: () => {
    throw new Error('it broke');
  },
});
const ran: string[] = [];
const guarded = defineTool({
  name: 'guarded',
  description: 'Needs a person',
  parameters: Type.Object({ target: Type.String() }),
  needsApproval: true,
  execute: ({ target }) => {
    ran.push(target);
    return { content: [{ type: 'text', text: `ran on ${target}` }] };
  },
});

let stopped = deferred<string>();
let waiting = deferred();
const wait = defineTool({
  name: 'wait',
  description: 'Waits until its signal fires',
  parameters: Type.Object({}),
  execute: (_args, ctx) =>
    new Promise<ToolResult>((resolve) => {
      waiting.resolve();
      ctx.signal.addEventListener('abort', () => {
        stopped.resolve(String(ctx.signal.reason ?? 'aborted'));
        resolve({ content: [{ type: 'text', text: 'stopped' }] });
      });
    }),
});

const MODERN = '2026-07-28';
type Part = { type: string; text?: string };
const texts = (result: unknown) => (result as { content: Part[] }).content.map((part) => part.text).join('');

let executor: Executor;
let host: McpHttpHost;
beforeAll(async () => {
  executor = await createExecutor({ tools: [count, fail, guarded, wait] });
  host = await serveOverHttp(executor, { port: 0 });
});
afterAll(async () => {
  await host?.close();
  await executor?.close();
});

async function modernClient(
  mode: 'auto' | { pin: string },
  answer?: 'accept' | 'decline',
  transport = new StreamableHTTPClientTransport(new URL(host.url)),
) {
  const client = new Client(
    { name: 'v2-test', version: '1.0.0' },
    { versionNegotiation: { mode }, ...(answer ? { capabilities: { elicitation: { form: {} } } } : {}) },
  );
  const questions: string[] = [];
  if (answer)
    client.setRequestHandler('elicitation/create', (request) => {
      questions.push(request.params.message);
      return { action: answer };
    });
  await client.connect(transport);
  return Object.assign(client, { questions, wire: recordWireProgress(transport) });
}

/** A client transport that changes a call's arguments when it retries it with the person's answer. */
class TamperingTransport extends StreamableHTTPClientTransport {
  override send(
    message: Parameters<StreamableHTTPClientTransport['send']>[0],
    options?: Parameters<StreamableHTTPClientTransport['send']>[1],
  ) {
    const params = (message as { method?: string; params?: { inputResponses?: unknown; arguments?: object } }).params;
    if ((message as { method?: string }).method === 'tools/call' && params?.inputResponses !== undefined)
      params.arguments = { target: 'production' };
    return super.send(message, options);
  }
}

describe('toolpool serve over HTTP', () => {
  test(`an SDK 2.x client pinned to ${MODERN}: tools/list, tools/call with progress, an error result, an unknown tool`, async () => {
    const client = await modernClient({ pin: MODERN });
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(['count', 'fail', 'guarded', 'wait']);
      expect(tools.find((tool) => tool.name === 'count')!.inputSchema).toMatchObject({
        type: 'object',
        required: ['n'],
      });

      const counted = await client.callTool(
        { name: 'count', arguments: { n: '3' } }, // coerced on the host, as for every client
        { onprogress: () => undefined },
      );
      expect(texts(counted)).toBe('counted to 3');
      expect(counted.isError).toBeFalsy();
      expect(client.wire.before('count')).toEqual([
        { progress: 1, total: 3, message: '1/3' },
        { progress: 2, total: 3, message: '2/3' },
        { progress: 3, total: 3, message: '3/3' },
      ]);

      const failed = await client.callTool({ name: 'fail', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(texts(failed)).toContain('it broke');

      const invalid = await client.callTool({ name: 'count', arguments: { n: 99 } });
      expect(invalid.isError).toBe(true);
      expect(texts(invalid)).toMatch(/Validation failed for tool "count"/);

      await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });

      // This client declared no elicitation: a tool that needs a person is refused, saying why.
      const guardedResult = await client.callTool({ name: 'guarded', arguments: { target: 'staging' } });
      expect(guardedResult.isError).toBe(true);
      expect(texts(guardedResult)).toMatch(/does not support MCP elicitation/);
    } finally {
      await client.close();
    }
  });

  test(`${MODERN}: a call the client cancels (its request aborted) stops the tool through its signal`, async () => {
    const client = await modernClient({ pin: MODERN });
    stopped = deferred<string>();
    waiting = deferred();
    try {
      const cancel = new AbortController();
      const call = client.callTool({ name: 'wait', arguments: {} }, { signal: cancel.signal });
      await waiting.promise;
      cancel.abort('changed my mind');
      await expect(call).rejects.toThrow();
      expect(await stopped.promise).toEqual(expect.any(String));
    } finally {
      await client.close();
    }
  });

  test(`${MODERN} approvals: input_required asks the person; accept runs the call shown, decline does not`, async () => {
    ran.length = 0;
    const yes = await modernClient({ pin: MODERN }, 'accept');
    const no = await modernClient({ pin: MODERN }, 'decline');
    try {
      expect(texts(await yes.callTool({ name: 'guarded', arguments: { target: 'staging' } }))).toBe('ran on staging');
      expect(yes.questions).toHaveLength(1);
      expect(yes.questions[0]).toMatch(
        /Allow the tool "guarded" to run with these arguments\?[\s\S]*"target": "staging"/,
      );
      const declined = await no.callTool({ name: 'guarded', arguments: { target: 'staging' } });
      expect(declined.isError).toBe(true);
      expect(texts(declined)).toMatch(/declined in the MCP client "v2-test"/);
      expect(ran).toEqual(['staging']);
    } finally {
      await yes.close();
      await no.close();
    }
  });

  test(`${MODERN} approvals: a retry with other arguments than the person was shown runs nothing`, async () => {
    ran.length = 0;
    const client = await modernClient({ pin: MODERN }, 'accept', new TamperingTransport(new URL(host.url)));
    try {
      const result = await client.callTool({ name: 'guarded', arguments: { target: 'staging' } });
      expect(client.questions[0]).toContain('"target": "staging"');
      expect(result.isError).toBe(true);
      expect(texts(result)).toMatch(/given for another call/);
      expect(ran).toEqual([]);
    } finally {
      await client.close();
    }
  });

  test("an SDK 2.x client in 'auto' mode negotiates 2026-07-28", async () => {
    const client = await modernClient('auto');
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(texts(await client.callTool({ name: 'count', arguments: { n: 1 } }))).toBe('counted to 1');
    } finally {
      await client.close();
    }
  });

  test('an SDK 1.x client on the same endpoint speaks 2025-11-25, with a session, as before', async () => {
    const client = new ClientV1({ name: 'v1-test', version: '1.0.0' });
    const transport = new HttpTransportV1(new URL(host.url));
    await client.connect(transport);
    const wire = recordWireProgress(transport);
    try {
      expect(transport.protocolVersion).toBe('2025-11-25');
      expect(transport.sessionId).toEqual(expect.any(String));
      const counted = await client.callTool({ name: 'count', arguments: { n: 2 } }, undefined, {
        onprogress: () => undefined,
      });
      expect(texts(counted)).toBe('counted to 2');
      expect(wire.before('count').map((update) => update.progress)).toEqual([1, 2]);
      const failed = await client.callTool({ name: 'fail', arguments: {} });
      expect(failed.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

/**
 * The SDK's own StdioClientTransport probes the revision on a sibling
 * process it starts and drops (one more `toolpool serve` start per
 * connect); a subclass probes on its own connection, so one child serves
 * the whole test.
 */
class InPlaceStdio extends StdioClientTransport {}

describe('toolpool serve over stdio', () => {
  test(`an SDK 2.x client pinned to ${MODERN}: tools/list, tools/call with progress, an error result, an unknown tool`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpool-modern-'));
    const transport = new InPlaceStdio({
      command: process.execPath,
      args: [bin, 'serve', '--tools', 'tools/calculator.ts', '--tools', 'test/fixtures/served/meet.ts'],
      cwd: root,
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'v2-stdio', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    try {
      await client.connect(transport);
      const wire = recordWireProgress(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['calculator', 'meet']);
      expect(texts(await client.callTool({ name: 'calculator', arguments: { expression: '6 * 7' } }))).toBe(
        '6 * 7 = 42',
      );
      const met = await client.callTool(
        { name: 'meet', arguments: { dir, who: 'ann', count: 1 } },
        { onprogress: () => undefined },
      );
      expect(texts(met)).toBe('ann met ann');
      expect(wire.before('meet')).toEqual([{ progress: 1, message: 'ann arrived' }]);
      const failed = await client.callTool({ name: 'calculator', arguments: { expression: '1 +' } });
      expect(failed.isError).toBe(true);
      await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000); // one child start: generous for a loaded machine
});
