/**
 * Zero trust: hostile input from the model side. executeBatch never rejects
 * for anything inside a call (depth, size, names, odd objects): each becomes
 * an error result with a bounded text. It rejects only for a malformed call
 * array, as documented.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Type } from '@sinclair/typebox';
import { createExecutor, defineTool, type Executor } from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';

let executor: Executor;
beforeAll(async () => {
  const strict = defineTool({
    name: 'strict',
    description: 'Accepts only { n: number }',
    parameters: Type.Object({ n: Type.Number() }, { additionalProperties: false }),
    execute: () => ({ content: [{ type: 'text', text: 'strict ran' }] }),
  });
  executor = await createExecutor({ tools: [fixture('probe.ts'), strict], workers: { min: 1, max: 2 } });
});
afterAll(() => executor.close());

function nested(depth: number): Record<string, unknown> {
  let inner: Record<string, unknown> = {};
  const root = { action: 'ok', extra: inner };
  for (let i = 0; i < depth; i++) inner = (inner.next = {}) as Record<string, unknown>;
  return root;
}

/** The hostile call gets a bounded error result, its neighbour is served. */
async function expectBoundedError(hostile: ReturnType<typeof call>, pattern: RegExp): Promise<void> {
  const batch = await executor.executeBatch([hostile, call('fine', 'probe', { action: 'ok', tag: 'beside' })]);
  expect(batch.results[0]!.isError).toBe(true);
  expect(textOf(batch.results[0]!)).toMatch(pattern);
  expect(textOf(batch.results[0]!).length).toBeLessThan(6_000);
  expect(textOf(batch.results[1]!)).toBe('ok beside');
}

describe('hostile input', () => {
  test('arguments nested 200,000 levels deep', () => expectBoundedError(call('deep', 'probe', nested(200_000)), /./));
  test('arguments nested 200,000 levels deep, as a JSON string', () =>
    expectBoundedError(call('deep-json', 'probe', `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`), /./));
  test('a 1 MB tool name', () => expectBoundedError(call('name', 'x'.repeat(1 << 20), {}), /not found/));
  test('200,000 unknown properties', () => {
    const args: Record<string, unknown> = { n: 1 };
    for (let i = 0; i < 200_000; i++) args[`unknown${i}`] = i;
    return expectBoundedError(call('wide', 'strict', args), /Validation failed[\s\S]*and 199980 more/);
  });
  test('a 1 MB string that is not JSON', () =>
    expectBoundedError(call('junk', 'probe', `{${'x'.repeat(1 << 20)}`), /not valid JSON/));
  test('arguments with a getter that throws', () => {
    const args = { action: 'ok' };
    Object.defineProperty(args, 'trap', {
      enumerable: true,
      get: () => {
        throw new Error('trap sprung');
      },
    });
    return expectBoundedError(call('getter', 'probe', args), /trap sprung/);
  });
  test('arguments that are a Proxy which throws on every trap', () => {
    const trap = () => {
      throw new Error('proxy trap');
    };
    const args = new Proxy(
      {},
      { get: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap, has: trap },
    );
    return expectBoundedError(call('proxy', 'probe', args as never), /proxy trap/);
  });
  test('arguments holding a BigInt and a cycle', () => {
    const args: Record<string, unknown> = { action: 'ok', big: 10n };
    args.self = args;
    return expectBoundedError(call('odd', 'probe', args), /./);
  });
  test('an array instead of an arguments object', () =>
    expectBoundedError(call('array', 'probe', [1, 2, 3] as never), /must be a JSON object/));
  test('a 1 MB call id is served', async () => {
    const batch = await executor.executeBatch([call('i'.repeat(1 << 20), 'probe', { action: 'ok', tag: 'long id' })]);
    expect(textOf(batch.results[0]!)).toBe('ok long id');
  });
  test('10,000 calls of unknown tools in one batch resolve', async () => {
    const batch = await executor.executeBatch(
      Array.from({ length: 10_000 }, (_, i) => call(`c${i}`, `missing_${i}`, {})),
    );
    expect(batch.results).toHaveLength(10_000);
    expect(batch.results.every((r) => r.isError)).toBe(true);
  });
  test('only a malformed call array rejects, with a message naming the problem', async () => {
    await expect(executor.executeBatch('not an array' as never)).rejects.toThrow(/toolCalls must be an array/);
    await expect(executor.executeBatch([null] as never)).rejects.toThrow(/toolCalls\[0\] needs a string "id"/);
    await expect(executor.executeBatch([{ id: 1, name: 'probe' }] as never)).rejects.toThrow(/needs a string "id"/);
  });
});
