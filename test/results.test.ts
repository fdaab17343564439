import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defineTool, type ToolResult } from '../src/index.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

const returns = (name: string, result: ToolResult | (() => ToolResult)) =>
  defineTool({
    name,
    description: name,
    parameters: Type.Object({}),
    execute: () => (typeof result === 'function' ? result() : result),
  });

describe('results (S6, S7)', () => {
  test('content and details reach the result message and the tool_end event', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([call('c1', 'probe', { action: 'ok', tag: 'x' })]);
    expect(results[0]).toMatchObject({
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'probe',
      content: [{ type: 'text', text: 'ok x' }],
      details: { tag: 'x' },
      isError: false,
    });
    expect(typeof results[0]!.timestamp).toBe('number');
    const end = events.find((e) => e.type === 'tool_end');
    expect(end).toMatchObject({
      type: 'tool_end',
      toolCallId: 'c1',
      isError: false,
      result: { details: { tag: 'x' } },
    });
    expect(end?.type === 'tool_end' && end.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a batch terminates only when every result asks for it', async () => {
    const executor = await createExecutor({
      tools: [returns('stop', { content: [], terminate: true }), returns('go', { content: [] }), fixture('probe.ts')],
    });
    expect((await executor.executeBatch([call('1', 'stop'), call('2', 'stop')])).terminate).toBe(true);
    expect((await executor.executeBatch([call('1', 'stop'), call('2', 'go')])).terminate).toBe(false);
    // An error result among terminating ones means no terminate.
    expect((await executor.executeBatch([call('1', 'stop'), call('2', 'probe', { action: 'throw' })])).terminate).toBe(
      false,
    );
    expect((await executor.executeBatch([call('1', 'probe', { action: 'ok', terminate: true })])).terminate).toBe(true);
    expect((await executor.executeBatch([])).terminate).toBe(false);
  });

  test('an invalid result shape is an error result that says what is wrong', async () => {
    const executor = await createExecutor({ tools: [returns('bad', () => ({ content: 'just text' }) as never)] });
    const { results } = await executor.executeBatch([call('1', 'bad')]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/invalid result: "content" must be an array/);
  });
});

describe('calls that cannot run (S9)', () => {
  test('an unknown tool and a blocked call each become an error result', async () => {
    const executor = await createExecutor({
      tools: [returns('other', { content: [] }), returns('fine', { content: [] })],
      beforeToolCall: () => ({ block: true }),
    });
    const { results } = await executor.executeBatch([call('1', 'ghost'), call('3', 'fine')]);
    expect(results.map((r) => r.isError)).toEqual([true, true]);
    expect(textOf(results[0]!)).toBe('Tool "ghost" not found. Available tools: other, fine.');
    expect(textOf(results[1]!)).toBe('Tool call was blocked by beforeToolCall.');
  });

  test("a tool without execute is refused when it is registered (the third round's contract), not when it is called", async () => {
    const noExecute = { ...returns('hollow', { content: [] }), execute: undefined } as never;
    await expect(createExecutor({ tools: [noExecute] })).rejects.toThrow(
      'Tool inline tool "hollow" is invalid: "execute" must be a function execute(args, ctx) that runs the tool (it is missing)',
    );
  });
});

describe('progress (S10)', () => {
  test('updates arrive as tool_update events, in order, before their tool_end', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('u', 'probe', { action: 'updates', count: 40 })]);
    const kinds = events.map((e) => e.type);
    expect(kinds[0]).toBe('tool_start');
    expect(kinds.at(-1)).toBe('tool_end');
    const updates = events.flatMap((e) => (e.type === 'tool_update' ? [e.partial.details] : []));
    expect(updates).toEqual(Array.from({ length: 40 }, (_, i) => ({ i: i + 1 })));
  });

  test('updates after the call settled are dropped', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('late', 'probe', { action: 'update-after-return' })]);
    // Give the late update every chance to arrive, then run another call on the same worker.
    await new Promise((resolve) => setTimeout(resolve, 50));
    await executor.executeBatch([call('next', 'probe', { action: 'ok' })]);
    expect(events.filter((e) => e.type === 'tool_update')).toEqual([]);
  });

  test('an inline tool drops updates after it settled too', async () => {
    let later: (() => void) | undefined;
    const tool = defineTool({
      name: 'inline_late',
      description: 'x',
      parameters: Type.Object({}),
      execute: (_args, ctx) => {
        ctx.onUpdate({ content: [{ type: 'text', text: 'during' }] });
        later = () => ctx.onUpdate({ content: [{ type: 'text', text: 'after' }] });
        return { content: [] };
      },
    });
    const executor = await createExecutor({ tools: [tool] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('1', 'inline_late')]);
    later!();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(
      events.filter((e) => e.type === 'tool_update').map((e) => e.type === 'tool_update' && textOf(e.partial)),
    ).toEqual(['during']);
  });
});

describe('hooks (S13)', () => {
  test('beforeToolCall { stop } ends the run: no tool of the batch executes, every call keeps a result', async () => {
    let executed = 0;
    const counted = defineTool({
      ...returns('counted', { content: [] }),
      execute: () => (executed++, { content: [] }),
    });
    const executor = await createExecutor({
      tools: [counted],
      beforeToolCall: ({ toolCall }) => (toolCall.id === '2' ? { stop: true, reason: 'budget exhausted' } : undefined),
    });
    const batch = await executor.executeBatch([call('1', 'counted'), call('2', 'counted'), call('3', 'counted')]);
    expect(executed).toBe(0);
    expect(batch.stopped).toBe(true);
    expect(batch.stopReason).toBe('budget exhausted');
    expect(batch.results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['1', true],
      ['2', true],
      ['3', true],
    ]);
    expect(textOf(batch.results[1]!)).toBe('Not run: the run was stopped (budget exhausted).');
  });

  test('afterToolCall rewrites content, details, isError and terminate', async () => {
    const executor = await createExecutor({
      tools: [returns('plain', { content: [{ type: 'text', text: 'original' }], details: { a: 1 } })],
      afterToolCall: ({ result }) => ({
        content: [{ type: 'text', text: `rewritten ${textOf(result)}` }],
        details: { b: 2 },
        isError: true,
        terminate: true,
      }),
    });
    const events = recordEvents(executor);
    const batch = await executor.executeBatch([call('1', 'plain')]);
    expect(batch.results[0]).toMatchObject({
      content: [{ type: 'text', text: 'rewritten original' }],
      details: { b: 2 },
      isError: true,
    });
    expect(events.at(-1)).toMatchObject({
      type: 'tool_end',
      isError: true,
      result: { terminate: true, details: { b: 2 } },
    });
    expect(batch.terminate).toBe(false); // an error result never terminates
  });

  test('afterToolCall can turn an error into a terminating success', async () => {
    const executor = await createExecutor({
      tools: [fixture('probe.ts')],
      afterToolCall: () => ({ isError: false, terminate: true, content: [{ type: 'text', text: 'handled' }] }),
    });
    const batch = await executor.executeBatch([call('1', 'probe', { action: 'throw' })]);
    expect(batch.results[0]!.isError).toBe(false);
    expect(batch.terminate).toBe(true);
  });

  test('afterToolCall { stop } stops the run but keeps the results', async () => {
    const executor = await createExecutor({
      tools: [returns('plain', { content: [{ type: 'text', text: 'kept' }] })],
      afterToolCall: () => ({ stop: true, reason: 'enough' }),
    });
    const batch = await executor.executeBatch([call('1', 'plain'), call('2', 'plain')]);
    expect(batch.stopped).toBe(true);
    expect(batch.results.map(textOf)).toEqual(['kept', 'kept']);
  });

  test('a hook that throws turns that call into an error result', async () => {
    const executor = await createExecutor({
      tools: [returns('plain', { content: [{ type: 'text', text: 'fine' }] })],
      beforeToolCall: ({ toolCall }) => {
        if (toolCall.id === 'b') throw new Error('before exploded');
      },
      afterToolCall: ({ toolCall }) => {
        if (toolCall.id === 'a') throw new Error('after exploded');
      },
    });
    const batch = await executor.executeBatch([call('a', 'plain'), call('b', 'plain'), call('c', 'plain')]);
    expect(batch.results.map((r) => [textOf(r), r.isError])).toEqual([
      ['afterToolCall failed: after exploded', true],
      ['beforeToolCall failed: before exploded', true],
      ['fine', false],
    ]);
  });

  test('hooks receive the validated, coerced arguments', async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      name: 'n',
      description: 'n',
      parameters: Type.Object({ n: Type.Number() }),
      execute: () => ({ content: [] }),
    });
    const executor = await createExecutor({
      tools: [tool],
      beforeToolCall: ({ args }) => void seen.push(args),
      afterToolCall: ({ args }) => void seen.push(args),
    });
    await executor.executeBatch([call('1', 'n', '{"n":"5"}')]);
    expect(seen).toEqual([{ n: 5 }, { n: 5 }]);
  });
});

describe('label (S2)', () => {
  test('label is UI metadata only: not in definitions, no change to execution', async () => {
    const base = {
      name: 'same',
      description: 'd',
      parameters: Type.Object({ x: Type.Number() }),
      execute: ({ x }: { x: number }) => ({ content: [{ type: 'text' as const, text: String(x * 2) }] }),
    };
    const labelled = await createExecutor({ tools: [defineTool({ ...base, label: 'A Fancy Label' })] });
    const plain = await createExecutor({ tools: [defineTool(base)] });
    expect(labelled.definitions).toEqual(plain.definitions);
    expect(JSON.stringify(labelled.definitions)).not.toContain('Fancy');
    const [a, b] = await Promise.all([
      labelled.executeBatch([call('1', 'same', { x: '21' })]),
      plain.executeBatch([call('1', 'same', { x: '21' })]),
    ]);
    expect(textOf(a.results[0]!)).toBe('42');
    expect({ ...a.results[0]!, timestamp: 0 }).toEqual({ ...b.results[0]!, timestamp: 0 });
  });

  test('executor.labels gives UIs each label by tool name, and nothing for a tool without one', async () => {
    const base = { description: 'd', parameters: Type.Object({}), execute: () => ({ content: [] }) };
    const executor = await createExecutor({
      tools: [defineTool({ ...base, name: 'a', label: 'Tool A' }), defineTool({ ...base, name: '__proto__' })],
    });
    expect([...executor.labels]).toEqual([['a', 'Tool A']]);
    expect(executor.labels.get('__proto__')).toBeUndefined();
  });
});
