import { Type } from '@sinclair/typebox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { ProgressNotification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { createMcpServer, serveOverHttp } from '../../src/adapters/mcp/index.ts';
import { progressListener } from '../../src/adapters/mcp/progress.ts';
import { defineTool, type ToolEvent, type ToolResult } from '../../src/index.ts';
import { useExecutors } from '../support/executors.ts';

const counter = defineTool({
  name: 'count',
  description: 'Counts to three of a hundred, starting at zero',
  parameters: Type.Object({}),
  execute: (_args, ctx) => {
    ctx.onUpdate({ content: [], details: { progress: 0, total: 100 } });
    ctx.onUpdate({ content: [{ type: 'text', text: 'still going' }] });
    ctx.onUpdate({ content: [], details: { progress: 3, total: 100 } });
    return { content: [{ type: 'text', text: 'done' }] };
  },
});

function update(partial: ToolResult): ToolEvent {
  return { type: 'tool_update', toolCallId: 'c', toolName: 't', partial } as ToolEvent;
}

async function notificationsFor(partials: ToolResult[]) {
  const sent: ProgressNotification['params'][] = [];
  const listen = progressListener('tok', async (notification) => void sent.push(notification.params));
  for (const partial of partials) await listen(update(partial));
  return sent.map(({ progressToken: _, ...rest }) => rest);
}

describe('MCP progress', () => {
  const open = useExecutors();

  test('a first progress of 0 goes out as 0 with its total, and the total stays with later updates', async () => {
    expect(
      await notificationsFor([
        { content: [], details: { progress: 0, total: 100 } },
        { content: [{ type: 'text', text: 'x' }] },
        { content: [], details: { progress: 3, total: 100 } },
      ]),
    ).toEqual([
      { progress: 0, total: 100, message: '0/100' },
      { progress: 1, total: 100, message: 'x' },
      { progress: 3, total: 100, message: '3/100' },
    ]);
  });

  test('progress still grows: a number that does not grow counts one more, a negative one too, and a count past the total drops it', async () => {
    expect(
      await notificationsFor([
        { content: [], details: { progress: 2, total: 3 } },
        { content: [], details: { progress: 1, total: 3 } },
        { content: [], details: { progress: -5 } },
        { content: [{ type: 'text', text: 'more' }] },
      ]),
    ).toEqual([
      { progress: 2, total: 3, message: '2/3' },
      { progress: 3, total: 3, message: '1/3' },
      { progress: 4 },
      { progress: 5, message: 'more' },
    ]);
  });

  test('an SDK client sees 0 of 100 first', async () => {
    const executor = await open({ tools: [counter] });
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const seen: Array<{ progress: number; total?: number }> = [];
    await client.callTool({ name: 'count', arguments: {} }, undefined, { onprogress: (p) => void seen.push(p) });
    expect(seen.map(({ progress, total }) => ({ progress, total }))).toEqual([
      { progress: 0, total: 100 },
      { progress: 1, total: 100 },
      { progress: 3, total: 100 },
    ]);
    await server.close();
  });
});

describe('serveOverHttp from toolpool/mcp (what `serve --http` runs, for hosts that embed it)', () => {
  const open = useExecutors();

  test('serves the executor on 127.0.0.1 at /mcp with a free port, and close() ends it', async () => {
    const executor = await open({ tools: [counter] });
    const host = await serveOverHttp(executor, { port: 0 });
    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'embedder', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(host.url)));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['count']);
    expect(await client.callTool({ name: 'count', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'done' }],
    });
    await client.close();
    await host.close();
    // Nothing listens any more.
    await expect(fetch(host.url, { method: 'POST', body: '{}' })).rejects.toThrow();
  });
});
