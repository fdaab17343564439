/**
 * `notifications/tools/list_changed` end to end: an upstream MCP server (the
 * test server over Streamable HTTP, in this process) adds a tool → the
 * executor lists it again and says so with a `tools_changed` event → the
 * clients of `toolpool serve` (over HTTP, and in process) are told and list
 * the new tool.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMcpServer, serveOverHttp, type McpHttpHost } from '../../src/adapters/mcp/index.ts';
import { createExecutor, type Executor, type ToolsChangedEvent } from '../../src/index.ts';
import { call, deferred, textOf } from '../support/executors.ts';
import { startHttpMcpServer, type HttpMcpServer } from '../support/mcp-servers.ts';

let upstream: HttpMcpServer;
let executor: Executor;
let served: McpHttpHost;
beforeAll(async () => {
  upstream = await startHttpMcpServer();
  executor = await createExecutor({ mcpServers: { up: { url: upstream.url } } });
  served = await serveOverHttp(executor, { port: 0 });
});
afterAll(async () => {
  await served?.close();
  await executor?.close();
  await upstream?.close();
});

/** A 1.x SDK client that counts the list changes it is told of. */
async function listeningClient(connect: (client: Client) => Promise<void>) {
  const client = new Client({ name: 'listener', version: '1.0.0' });
  let told = deferred();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => told.resolve());
  await connect(client);
  return {
    client,
    /** Resolves at the next list_changed. */
    next: () => told.promise.then(() => void (told = deferred())),
  };
}

describe('an upstream tools/list_changed', () => {
  test('the executor says which tools came, once the definitions show them', async () => {
    const events: ToolsChangedEvent[] = [];
    const seenThen: string[][] = [];
    const stop = executor.on('tools_changed', (event) => {
      events.push(event);
      seenThen.push(executor.definitions.map((definition) => definition.name));
    });
    const { results } = await executor.executeBatch([call('a', 'up_add_tool', { name: 'first' })]);
    // The whole text when it fails: seen once on a loaded machine as "could not run the call: ...".
    expect(results[0]!.isError, textOf(results[0]!)).toBe(false);
    expect(textOf(results[0]!)).toBe('added first');
    expect(events).toEqual([{ type: 'tools_changed', added: ['up_first'], removed: [], changed: [] }]);
    expect(seenThen[0]).toContain('up_first');
    stop();
    await executor.executeBatch([call('b', 'up_add_tool', { name: 'unheard' })]);
    expect(events).toHaveLength(1); // unsubscribed
  });

  test('toolpool serve over HTTP tells its client, which then lists the new tool', async () => {
    const { client, next } = await listeningClient((c) =>
      c.connect(new StreamableHTTPClientTransport(new URL(served.url))),
    );
    try {
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      const told = next();
      const result = await client.callTool({ name: 'up_add_tool', arguments: { name: 'over_http' } });
      expect(result.content).toEqual([{ type: 'text', text: 'added over_http' }]);
      await told;
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('up_over_http');
    } finally {
      await client.close();
    }
  });

  test('a 2026-07-28 client of toolpool serve hears it on its subscriptions/listen stream, then lists the new tool', async () => {
    const client = new ClientV2(
      { name: 'modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    let told = deferred();
    client.setNotificationHandler('notifications/tools/list_changed', () => told.resolve());
    await client.connect(new HttpTransportV2(new URL(served.url)));
    const subscription = await client.listen({ toolsListChanged: true });
    try {
      expect(subscription.honoredFilter).toMatchObject({ toolsListChanged: true });
      await client.callTool({ name: 'up_add_tool', arguments: { name: 'modern' } });
      await told.promise;
      told = deferred();
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('up_modern');
    } finally {
      await subscription.close();
      await client.close();
    }
  });

  test('createMcpServer in process tells its client too, and stops listening once closed', async () => {
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const { client, next } = await listeningClient((c) => c.connect(clientSide));
    const told = next();
    await executor.executeBatch([call('c', 'up_add_tool', { name: 'in_process' })]);
    await told;
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('up_in_process');
    await server.close();
    // A change after the close reaches no closed server (it would throw "Not connected" unhandled).
    await executor.executeBatch([call('d', 'up_add_tool', { name: 'after_close' })]);
    expect(executor.definitions.map((definition) => definition.name)).toContain('up_after_close');
  });

  test('on() with an unknown event name is refused, naming the known one', () => {
    expect(() => executor.on('tool_end' as 'tools_changed', () => undefined)).toThrow(
      /executor\.on\("tool_end", listener\): no such event; the events are tools_changed/,
    );
  });
});
