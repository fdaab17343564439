/**
 * needsApproval for an MCP server's tools: `true`, or a function of the
 * server's own tool name and the validated, coerced arguments; the Agent
 * pauses, snapshots and resumes as it does for toolpool's own tools.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  Agent,
  createExecutor,
  scriptedModel,
  type AgentEvent,
  type Executor,
  type ToolResultMessage,
} from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { stdioServer } from '../support/mcp-servers.ts';

const asked: Array<{ tool: string; args: Record<string, unknown> }> = [];
let executor: Executor;
beforeAll(async () => {
  executor = await createExecutor({
    mcpServers: {
      bank: stdioServer({
        needsApproval: (tool, args) => {
          asked.push({ tool, args });
          return tool === 'pay' && (args.amount as number) > 100;
        },
      }),
      vault: stdioServer({ isolation: 'process', needsApproval: true }),
    },
  });
});
afterAll(() => executor.close());

/** What the server saw of tool calls since the last look. */
async function paidByServer(): Promise<unknown[]> {
  const { results } = await executor.executeBatch([call('seen', 'bank_seen')]);
  return (JSON.parse(textOf(results[0]!)) as Array<{ tool: string }>).filter((entry) => entry.tool === 'pay');
}

describe('needsApproval of an MCP server', () => {
  test("a function gets the server's own tool name and the coerced arguments; a call it gates does not run without approval", async () => {
    await paidByServer();
    asked.length = 0;
    const { results } = await executor.executeBatch([
      call('big', 'bank_pay', { amount: '500', to: 'ann' }),
      call('small', 'bank_pay', { amount: 5, to: 'bob' }),
    ]);
    expect(asked).toEqual([
      { tool: 'pay', args: { amount: 500, to: 'ann' } },
      { tool: 'pay', args: { amount: 5, to: 'bob' } },
    ]);
    expect(results[0]).toMatchObject({ isError: true });
    expect(textOf(results[0]!)).toMatch(/^Not run: "bank_pay" needs a person's approval/);
    expect(textOf(results[1]!)).toBe('paid 5 to bob');
    expect(await paidByServer()).toEqual([{ tool: 'pay', args: { amount: 5, to: 'bob' } }]);
    expect(executor.metadata.get('bank_pay')?.needsApproval).toBe('function');
    expect(executor.metadata.get('vault_pay')?.needsApproval).toBe('always');
  });

  test('true gates every call; an approved call runs', async () => {
    const refused = await executor.executeBatch([call('v', 'vault_echo', { text: 'x' })]);
    expect(textOf(refused.results[0]!)).toMatch(/^Not run: "vault_echo" needs a person's approval/);
    const approved = await executor.executeBatch([call('v', 'vault_echo', { text: 'x' })], {
      approvals: { approved: ['v'] },
    });
    expect(textOf(approved.results[0]!)).toBe('x');
  });

  test('an Agent pauses, its snapshot resumes in a new Agent, and the results come in source order', async () => {
    await paidByServer();
    const script = () =>
      scriptedModel([
        {
          toolCalls: [
            { id: 'big', name: 'bank_pay', arguments: { amount: 900, to: 'cy' } },
            { id: 'small', name: 'bank_pay', arguments: { amount: '7', to: 'di' } },
            { id: 'huge', name: 'bank_pay', arguments: { amount: 5000, to: 'eve' } },
          ],
        },
        { text: 'all done' },
      ]);
    const first = new Agent({ model: script(), executor });
    const ends: AgentEvent[] = [];
    first.subscribe((event) => void (event.type === 'agent_end' && ends.push(event)));
    await first.prompt('pay them');
    expect(ends.at(-1)).toMatchObject({
      reason: 'approval',
      pending: [{ toolCallId: 'big', args: { amount: 900, to: 'cy' } }, { toolCallId: 'huge' }],
    });
    expect(await paidByServer()).toEqual([]); // nothing ran while it waits

    const saved = JSON.stringify(first.snapshot());
    const again = new Agent({ model: scriptedModel([{ text: 'all done' }]), executor, snapshot: JSON.parse(saved) });
    const added = await again.resume({ approved: ['big'], rejected: { huge: 'too much' } });
    const results = added.filter((message): message is ToolResultMessage => message.role === 'toolResult');
    expect(results.map((result) => [result.toolCallId, result.isError, textOf(result)])).toEqual([
      ['big', false, 'paid 900 to cy'],
      ['small', false, 'paid 7 to di'],
      ['huge', true, expect.stringMatching(/^Not run: a person rejected this call of "bank_pay" \(too much\)/)],
    ]);
    expect(await paidByServer()).toEqual([
      { tool: 'pay', args: { amount: 900, to: 'cy' } },
      { tool: 'pay', args: { amount: 7, to: 'di' } },
    ]);
  });
});
