import { Type } from '@sinclair/typebox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, test } from 'vitest';
import { createMcpServer } from '../../src/adapters/mcp/index.ts';
import { defineTool } from '../../src/index.ts';
import { useExecutors } from '../support/executors.ts';

// tools/call and the ledger: unkeyed unless the client gives _meta "toolpool/runId" and "toolpool/callId".
describe('MCP server: calls keyed only where the client says so', () => {
  const open = useExecutors();

  async function connect(runs: string[]) {
    const pay = defineTool({
      name: 'pay',
      description: 'Pay',
      parameters: Type.Object({ amount: Type.Number() }),
      execute: ({ amount }, ctx) => {
        runs.push(`${ctx.runId}:${ctx.callId}:${amount}`);
        return { content: [{ type: 'text', text: `paid ${amount}` }] };
      },
    });
    const executor = await open({ tools: [pay] });
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    return client;
  }

  test('a retried tools/call with the same _meta key is answered from the ledger; without one, each call runs', async () => {
    const runs: string[] = [];
    const client = await connect(runs);
    const keyed = {
      name: 'pay',
      arguments: { amount: 5 },
      _meta: { 'toolpool/runId': 'session-1', 'toolpool/callId': 'req-1' },
    };
    const first = await client.callTool(keyed);
    const retry = await client.callTool(keyed);
    expect(runs).toEqual(['session-1:req-1:5']);
    expect(retry.content).toEqual(first.content);
    await client.callTool({ name: 'pay', arguments: { amount: 5 } });
    await client.callTool({ name: 'pay', arguments: { amount: 5 } });
    expect(runs).toHaveLength(3);
    expect(runs[1]).toMatch(/^undefined:mcp_\d+:5$/);
  });

  test('half a key is refused without running', async () => {
    const runs: string[] = [];
    const client = await connect(runs);
    const result = await client.callTool({
      name: 'pay',
      arguments: { amount: 5 },
      _meta: { 'toolpool/runId': 'session-1' },
    });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(
      /_meta \\"toolpool\/runId\\" and \\"toolpool\/callId\\" go together/,
    );
    expect(runs).toEqual([]);
  });
});
