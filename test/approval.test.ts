import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defineTool, type ToolEvent } from '../src/index.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** An inline tool whose calls always need approval; it logs what ran. */
function deleteTool(log: string[]) {
  return defineTool({
    name: 'delete',
    description: 'Delete a file',
    parameters: Type.Object({ path: Type.String(), force: Type.Optional(Type.Boolean()) }),
    needsApproval: true,
    execute: ({ path }) => {
      log.push(`delete:${path}`);
      return { content: [{ type: 'text', text: `deleted ${path}` }] };
    },
  });
}

function listTool(log: string[]) {
  return defineTool({
    name: 'list',
    description: 'List files',
    parameters: Type.Object({}),
    execute: () => {
      log.push('list');
      return { content: [{ type: 'text', text: 'a.txt b.txt' }] };
    },
  });
}

describe('executeBatch: approvals', () => {
  test('without approvals, a call that needs approval is refused with an error result; the others run', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log), listTool(log)] });
    const batch = await executor.executeBatch([call('c1', 'delete', { path: 'a.txt' }), call('c2', 'list')]);
    expect(log).toEqual(['list']);
    expect(batch.results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['c1', true],
      ['c2', false],
    ]);
    expect(textOf(batch.results[0]!)).toMatch(/"delete" needs a person's approval/);
    expect(batch.pending).toBeUndefined();
  });

  test('undecided: { refuse: why } refuses the call with an error result that says why nobody could approve it', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log), listTool(log)] });
    const batch = await executor.executeBatch([call('c1', 'delete', { path: 'a.txt' }), call('c2', 'list')], {
      approvals: { undecided: { refuse: 'no one is there to ask.' } },
    });
    expect(log).toEqual(['list']);
    expect(batch.results.map((r) => [textOf(r), r.isError])).toEqual([
      ['Not run: "delete" needs a person\'s approval, and no one is there to ask.', true],
      ['a.txt b.txt', false],
    ]);
  });

  test("undecided: 'pause' runs no call of the batch, sends no event and returns the pending calls with validated, coerced args", async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log), listTool(log)] });
    const events = recordEvents(executor);
    const batch = await executor.executeBatch(
      [call('c1', 'list'), call('c2', 'delete', '{"path": "a.txt", "force": "true"}')],
      {
        approvals: { undecided: 'pause' },
      },
    );
    expect(log).toEqual([]);
    expect(events).toEqual([]);
    expect(batch).toMatchObject({ results: [], terminate: false, stopped: false });
    expect(batch.pending).toEqual([{ toolCallId: 'c2', toolName: 'delete', args: { path: 'a.txt', force: true } }]);
  });

  test('approved calls run, rejected ones get the reason, in source order with their events', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log), listTool(log)] });
    const events = recordEvents(executor);
    const batch = await executor.executeBatch(
      [call('c1', 'delete', { path: 'a.txt' }), call('c2', 'list'), call('c3', 'delete', { path: 'b.txt' })],
      { approvals: { approved: ['c3'], rejected: { c1: 'keep a.txt' }, undecided: 'pause' } },
    );
    expect(log).toEqual(['list', 'delete:b.txt']);
    expect(batch.results.map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['c1', true, 'Not run: a person rejected this call of "delete" (keep a.txt).'],
      ['c2', false, 'a.txt b.txt'],
      ['c3', false, 'deleted b.txt'],
    ]);
    const outline = (e: ToolEvent) => `${e.type}:${e.toolCallId}`;
    expect(events.map(outline)).toEqual([
      'tool_start:c1',
      'tool_start:c2',
      'tool_start:c3',
      'tool_end:c1',
      'tool_end:c2',
      'tool_end:c3',
    ]);
  });

  test('a call that reuses an earlier call id is refused, not put before a person', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log), listTool(log)] });
    const batch = await executor.executeBatch([call('same', 'list'), call('same', 'delete', { path: 'a.txt' })], {
      approvals: { undecided: 'pause' },
    });
    expect(batch.pending).toBeUndefined();
    expect(log).toEqual(['list']);
    expect(batch.results.map((r) => r.isError)).toEqual([false, true]);
  });

  test('a call that would fail anyway is not put before a person: the batch reports its own error', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [deleteTool(log)] });
    const batch = await executor.executeBatch([call('c1', 'delete', { force: true })], {
      approvals: { undecided: 'pause' },
    });
    expect(batch.pending).toBeUndefined();
    expect(batch.results[0]).toMatchObject({ isError: true });
    expect(textOf(batch.results[0]!)).toMatch(/Validation failed for tool "delete"/);
  });

  test('needsApproval as an inline function gets the validated, coerced arguments', async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'transfer',
      description: 'Transfer money',
      parameters: Type.Object({ amount: Type.Number() }),
      needsApproval: async (args) => {
        seen.push(args);
        return args.amount > 100;
      },
      execute: ({ amount }) => ({ content: [{ type: 'text', text: `sent ${amount}` }] }),
    });
    const executor = await createExecutor({ tools: [tool] });
    const batch = await executor.executeBatch(
      [call('small', 'transfer', { amount: '5' }), call('big', 'transfer', { amount: '500' })],
      {
        approvals: { undecided: 'pause' },
      },
    );
    expect(seen).toEqual([{ amount: 5 }, { amount: 500 }]);
    expect(batch.pending).toEqual([{ toolCallId: 'big', toolName: 'transfer', args: { amount: 500 } }]);
  });

  for (const isolation of ['worker', 'process', 'sandbox'] as const) {
    test(`a module tool's needsApproval runs in its ${isolation} tier, not on the main thread`, async () => {
      const executor = await createExecutor({ tools: [fixture('pay.ts')], isolation });
      const batch = await executor.executeBatch(
        [call('c1', 'pay', { amount: 10, to: 'ann' }), call('c2', 'pay', { amount: 1000, to: 'bob' })],
        {
          approvals: { undecided: 'pause' },
        },
      );
      // The fixture throws on the main thread, which would be an error result instead of this answer.
      expect(batch.pending).toEqual([{ toolCallId: 'c2', toolName: 'pay', args: { amount: 1000, to: 'bob' } }]);
      const resumed = await executor.executeBatch(
        [call('c1', 'pay', { amount: 10, to: 'ann' }), call('c2', 'pay', { amount: 1000, to: 'bob' })],
        {
          approvals: { approved: ['c2'], undecided: 'pause' },
        },
      );
      expect(resumed.results.map(textOf)).toEqual(['paid 10 to ann', 'paid 1000 to bob']);
    });
  }

  test('a needsApproval that throws or answers something other than a boolean becomes an error result for that call', async () => {
    const executor = await createExecutor({ tools: [fixture('pay.ts')] });
    const batch = await executor.executeBatch(
      [
        call('c1', 'pay', { amount: 1, to: 'throw' }),
        call('c2', 'pay', { amount: 1, to: 'maybe' }),
        call('c3', 'pay', { amount: 1, to: 'cy' }),
      ],
      {
        approvals: { undecided: 'pause' },
      },
    );
    expect(batch.pending).toBeUndefined();
    expect(batch.results.map((r) => [r.isError, textOf(r)])).toEqual([
      [true, 'needsApproval of tool "pay" failed: approval service down'],
      [true, 'needsApproval of tool "pay" failed: it returned maybe, not true or false'],
      [false, 'paid 1 to cy'],
    ]);
  });

  test('a bad needsApproval value is refused when the tool is registered', async () => {
    const tool = defineTool({
      name: 'x',
      description: 'x',
      parameters: Type.Object({}),
      needsApproval: 'yes' as never,
      execute: () => ({ content: [] }),
    });
    await expect(createExecutor({ tools: [tool] })).rejects.toThrow(
      /"needsApproval" must be true, false or a function/,
    );
  });
});
