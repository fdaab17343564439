/**
 * Waits that used to be unbounded or unexplained: a value nested 200,000
 * levels deep inside otherwise valid arguments (a field that takes any
 * value), a tool module that ends its worker while it is imported, and one
 * whose import never finishes. Each ends promptly, with a text that names
 * the tool or the module and what to do.
 */
import { describe, expect, test } from 'vitest';
import { createExecutor } from '../../src/index.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const open = useExecutors();
const deepJson = `{"data":${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}}`;
const deepObject = () => {
  let value: unknown = 1;
  for (let i = 0; i < 200_000; i++) value = { a: value };
  return { data: value };
};

describe.each(['worker', 'process'] as const)('%s tier', (isolation) => {
  test.each([
    ['as a JSON string', deepJson],
    ['as an object', deepObject()],
  ])(
    'a value nested 200,000 levels deep inside valid arguments, %s: an error result at once, the next call is served',
    async (_how, args) => {
      const executor = await open({ tools: [fixture('leftovers/any-data.ts')], isolation });
      const started = Date.now();
      const { results } = await executor.executeBatch([call('deep', 'any_data', args as never)]);
      expect(Date.now() - started).toBeLessThan(10_000); // at once on a quiet machine; generous for a loaded one
      expect(textOf(results[0]!)).toMatch(/arguments for tool "any_data" nest deeper than 1000 levels/);
      const next = await executor.executeBatch([call('next', 'any_data', { data: { a: { b: 1 } } })]);
      expect(textOf(next.results[0]!)).toBe('depth 2');
    },
  );

  test('a module that calls process.exit() at import: createExecutor names the module and the cause', async () => {
    await expect(createExecutor({ tools: [fixture('leftovers/exits-at-import.mjs')], isolation })).rejects.toThrow(
      /Tool module .*exits-at-import\.mjs failed to load: its worker ended with exit code 3 while the module was being imported \(a process\.exit\(\)/,
    );
  });

  test('a module whose import never finishes (top-level await forever): createExecutor rejects within loadTimeoutMs, naming it', async () => {
    const started = Date.now();
    await expect(
      createExecutor({
        tools: [fixture('leftovers/awaits-forever.mjs')],
        isolation,
        workers: { loadTimeoutMs: 1_500 },
      }),
    ).rejects.toThrow(
      /Tool module .*awaits-forever\.mjs did not finish loading within 1500 ms \(workers\.loadTimeoutMs\)/,
    );
    expect(Date.now() - started).toBeLessThan(1_500 + 5_000);
  });
});
