import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defineTool } from '../src/index.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

// defineTool({ outputSchema, annotations }): what the host checks and what executor.metadata gives.

describe("outputSchema: the host checks each result's details", () => {
  const open = useExecutors();

  test("a module tool's details that match pass as they are; a wrong type, a failed pattern or missing details are error results naming the problem", async () => {
    const executor = await open({ tools: [fixture('output/counted.ts')] });
    const { results } = await executor.executeBatch([
      call('ok', 'counted'),
      call('type', 'counted', { bad: 'type' }),
      call('pattern', 'counted', { bad: 'pattern' }),
      call('missing', 'counted', { bad: 'missing' }),
    ]);
    expect(results[0]).toMatchObject({ isError: false, details: { count: 2, word: 'ok' } });
    expect(results.slice(1).map((r) => r.isError)).toEqual([true, true, true]);
    expect(textOf(results[1]!)).toBe(
      'Tool "counted" returned details that do not match its outputSchema:\n  - count: must be integer\nReturned details: {"count":"2","word":"ok"}',
    );
    expect(textOf(results[2]!)).toContain('  - word: must match pattern "^[a-z]+$"');
    expect(textOf(results[3]!)).toContain('  - (root): must be object');
  });

  test('an inline tool too; afterToolCall and tool_end see the error result, not the details', async () => {
    const seen: boolean[] = [];
    const tool = defineTool({
      name: 'inline_counted',
      description: 'x',
      parameters: Type.Object({}),
      outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: () => ({ content: [{ type: 'text', text: 'hi' }], details: { m: 1 } }),
    });
    const executor = await open({ tools: [tool], afterToolCall: ({ isError }) => void seen.push(isError) });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([call('a', 'inline_counted')]);
    expect(results[0]).toMatchObject({ isError: true, details: undefined });
    expect(textOf(results[0]!)).toMatch(
      /^Tool "inline_counted" returned details that do not match its outputSchema:\n {2}- n: is required but missing/,
    );
    expect(seen).toEqual([true]);
    expect(events.at(-1)).toMatchObject({ type: 'tool_end', isError: true });
  });

  test("a module's outputSchema is untrusted: a pattern that cannot run in linear time refuses the tool at createExecutor", async () => {
    await expect(open({ tools: [fixture('output/lookahead.ts')] })).rejects.toThrow(
      /^Tool module .*lookahead\.ts has an invalid outputSchema: pattern "\^\(\?=a\)a\+\$" cannot run in linear time/,
    );
  });

  test.each([
    [
      { outputSchema: Type.Array(Type.String()) },
      /"outputSchema\.type" must be "object" \(details are an object, as MCP's structuredContent\)/,
    ],
    [{ outputSchema: 'an object' }, /"outputSchema" must be an object schema/],
    [{ annotations: { readOnlyHint: 'yes' } }, /"annotations\.readOnlyHint" must be a boolean \(got "yes"\)/],
    [
      { annotations: { color: 'red' } },
      /unknown option "annotations\.color"; the known options of annotations are title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint/,
    ],
  ])('a wrong %j is refused at registration, naming the field', async (fields, message) => {
    const tool = {
      ...defineTool({ name: 'x', description: 'x', parameters: Type.Object({}), execute: () => ({ content: [] }) }),
      ...fields,
    };
    await expect(open({ tools: [tool as never] })).rejects.toThrow(message);
  });
});

describe('executor.metadata and executor.needsApproval', () => {
  const open = useExecutors();

  test('metadata gives annotations, outputSchema and the approval policy by tool name; tools without hints have none', async () => {
    const plain = defineTool({
      name: 'plain',
      description: 'x',
      parameters: Type.Object({}),
      execute: () => ({ content: [] }),
    });
    const checked = defineTool({
      ...plain,
      name: 'checked',
      needsApproval: (args: { n?: number }) => (args.n ?? 0) > 1,
      parameters: Type.Object({ n: Type.Optional(Type.Number()) }),
    });
    const executor = await open({ tools: [fixture('output/counted.ts'), plain, checked, fixture('pay.ts')] });
    expect(executor.metadata.get('counted')).toEqual({
      annotations: { title: 'Counted', readOnlyHint: true },
      outputSchema: expect.objectContaining({ type: 'object', required: ['count', 'word'] }),
      needsApproval: 'never',
      // A module tool's tier and content hash (toolpool/bullmq checks them); inline tools have neither.
      isolation: 'worker',
      moduleHash: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(executor.metadata.get('plain')).toEqual({ needsApproval: 'never' });
    expect(executor.metadata.get('checked')).toEqual({ needsApproval: 'function' });
    expect(executor.metadata.get('__proto__')).toBeUndefined();
  });

  test('needsApproval(calls) lists the calls that would wait, with their validated arguments, and runs no tool', async () => {
    const executor = await open({ tools: [fixture('pay.ts')] });
    const events = recordEvents(executor);
    const pending = await executor.needsApproval([
      call('small', 'pay', { amount: 5, to: 'ann' }),
      call('big', 'pay', { amount: '500', to: 'bob' }),
      call('broken', 'pay', { amount: 500, to: 'throw' }),
      call('invalid', 'pay', { amount: 500 }),
    ]);
    expect(pending).toEqual([{ toolCallId: 'big', toolName: 'pay', args: { amount: 500, to: 'bob' } }]);
    expect(events).toEqual([]);
  });
});
