import { Type } from '@sinclair/typebox';
import { expect, test } from 'vitest';
import { defineTool } from '../src/index.ts';
import { call, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

test('two calls with the same id in one batch: the first runs, each later one gets an error result saying why', async () => {
  const ran: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    parameters: Type.Object({ text: Type.String() }),
    execute: ({ text }) => {
      ran.push(text);
      return { content: [{ type: 'text', text }] };
    },
  });
  const executor = await createExecutor({ tools: [echo] });
  const events = recordEvents(executor);
  const { results } = await executor.executeBatch([
    call('a', 'echo', { text: 'first' }),
    call('b', 'echo', { text: 'other' }),
    call('a', 'echo', { text: 'second' }),
    call('a', 'echo', { text: 'third' }),
  ]);
  expect(ran).toEqual(['first', 'other']);
  expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
    ['a', false],
    ['b', false],
    ['a', true],
    ['a', true],
  ]);
  expect(textOf(results[2]!)).toBe(
    'Not run: an earlier call in this batch has the same id "a", and results are matched to calls by id. Give each tool call its own id.',
  );
  // Each call, duplicate or not, still starts and ends in source order.
  expect(
    events.filter((event) => event.type === 'tool_end').map((event) => event.type === 'tool_end' && event.isError),
  ).toEqual([false, false, true, true]);
});

test('the same id in two different batches is not a duplicate', async () => {
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    parameters: Type.Object({}),
    execute: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  });
  const executor = await createExecutor({ tools: [echo] });
  const first = await executor.executeBatch([call('a', 'echo')]);
  const second = await executor.executeBatch([call('a', 'echo')]);
  expect([first.results[0]!.isError, second.results[0]!.isError]).toEqual([false, false]);
});
