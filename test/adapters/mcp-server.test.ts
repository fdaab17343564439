import { Type } from '@sinclair/typebox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, test } from 'vitest';
import { createMcpServer } from '../../src/adapters/mcp/index.ts';
import { progressMessage } from '../../src/adapters/mcp/progress.ts';
import { defineTool, type ExecutorOptions } from '../../src/index.ts';
import { useExecutors } from '../support/executors.ts';

const echo = defineTool({
  name: 'echo',
  label: 'Echo',
  description: 'Echo a word',
  parameters: Type.Object({ word: Type.String() }),
  execute: ({ word }, ctx) => {
    ctx.onUpdate({ content: [], details: { message: 'echoing' } });
    ctx.onUpdate({ content: [], details: { percent: 50 } });
    return { content: [{ type: 'text', text: word }] };
  },
});

describe('createMcpServer (in process, over the SDK in-memory transport)', () => {
  const open = useExecutors();

  async function connect(options: Partial<ExecutorOptions> = {}) {
    const executor = await open({ tools: [echo], ...options });
    const server = createMcpServer(executor, { name: 'test-tools', version: '9.9.9' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    return { server, client };
  }

  test('names itself as asked and declares the tools capability only (with listChanged: the executor says when its tools change)', async () => {
    const { client, server } = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'test-tools', version: '9.9.9' });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: true } });
    await server.close();
  });

  test('registerTool on the returned server fails loudly instead of adding a tool nobody serves', async () => {
    const { server } = await connect();
    expect(() => server.registerTool('extra', { description: 'x' }, () => ({ content: [] }))).toThrow(/tools\/list/);
    await server.close();
  });

  test('hooks apply: a call blocked by beforeToolCall is an isError result with the reason', async () => {
    const { client, server } = await connect({ beforeToolCall: () => ({ block: true, reason: 'Not today.' }) });
    expect(await client.callTool({ name: 'echo', arguments: { word: 'hi' } })).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Not today.' }],
    });
    await server.close();
  });

  test('an unknown tool is the protocol error -32602 (invalid params) listing the tools, not a tool result', async () => {
    const { client, server } = await connect();
    const failure = await client.callTool({ name: 'nope', arguments: {} }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({
      code: -32602,
      message: expect.stringContaining('Tool "nope" not found. Available tools: echo.'),
    });
    await server.close();
  });

  test('progress messages come from details.message and details.percent (also progress of 100) when an update has no text', async () => {
    const { client, server } = await connect();
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    // The in-memory transport hands messages over one at a time, so the SDK client's late notification
    // handling (see mcp-serve.test.ts) cannot drop the last one here.
    await client.callTool({ name: 'echo', arguments: { word: 'hi' } }, undefined, {
      onprogress: (progress) => void seen.push(progress),
    });
    expect(seen).toEqual([
      { progress: 1, message: 'echoing' },
      { progress: 50, total: 100, message: '50%' },
    ]);
    await server.close();
  });
});

describe('progressMessage', () => {
  test.each([
    [
      {
        content: [
          { type: 'text' as const, text: 'a' },
          { type: 'text' as const, text: 'b' },
        ],
        details: { message: 'm' },
      },
      'ab',
    ],
    [{ content: [], details: 'connecting' }, 'connecting'],
    [{ content: [], details: { message: 'm', percent: 10 } }, 'm'],
    [{ content: [], details: { percent: 12.5 } }, '12.5%'],
    [{ content: [], details: { percent: Number.NaN } }, undefined],
    [{ content: [] }, undefined],
  ])('%j -> %j', (partial, expected) => {
    expect(progressMessage(partial)).toBe(expected);
  });
});
