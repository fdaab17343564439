import { describe, expect, test } from 'vitest';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const waiter = (concurrency?: number) => ({
  module: fixture('shared-waiter.ts'),
  options: concurrency === undefined ? {} : { concurrency },
});
const waits = (count: number, ms = 50) =>
  Array.from({ length: count }, (_, i) => call(`w${i}`, 'shared_waiter', { mode: 'wait', ms }));
const report = (text: string) => JSON.parse(text) as { threadId: number; mostAtOnce: number };

describe('defineTool({ concurrency })', () => {
  const executor = useExecutors();

  test('up to N calls of the tool share one worker at once, and never more', async () => {
    const tools = await executor({ tools: [waiter(8)], workers: { min: 2, max: 2 } });
    const { results } = await tools.executeBatch(waits(32));
    expect(results.every((result) => !result.isError)).toBe(true);
    const reports = results.map((result) => report(textOf(result)));
    expect(new Set(reports.map((r) => r.threadId)).size).toBeLessThanOrEqual(2);
    const most = Math.max(...reports.map((r) => r.mostAtOnce));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
  });

  test('the default is one call per worker at a time', async () => {
    const tools = await executor({ tools: [waiter()], workers: { min: 2, max: 2 } });
    const { results } = await tools.executeBatch(waits(8, 10));
    expect(results.map((result) => report(textOf(result)).mostAtOnce)).toEqual(Array(8).fill(1));
  });

  test('works the same in the process tier', async () => {
    const tools = await executor({ tools: [waiter(4)], isolation: 'process', workers: { min: 1, max: 1 } });
    const { results } = await tools.executeBatch(waits(8));
    expect(results.every((result) => !result.isError)).toBe(true);
    const most = Math.max(...results.map((result) => report(textOf(result)).mostAtOnce));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(4);
  });

  test('a call killed after its timeout takes the calls sharing its worker with it, and they say so; calls not started run elsewhere', async () => {
    const tools = await executor({
      tools: [waiter(2)],
      workers: { min: 1, max: 1 },
      limits: { timeoutMs: 1_000, abortGraceMs: 100 },
    });
    const hanging = tools.executeBatch([call('hang', 'shared_waiter', { mode: 'hang' })]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Beside it (its own deadline is later), and three more than the worker has room for: sent ahead, or waiting.
    const besideIt = tools.executeBatch([
      call('beside', 'shared_waiter', { mode: 'wait', ms: 5_000 }),
      ...waits(3, 10),
    ]);
    const [hang] = (await hanging).results;
    const [beside, ...later] = (await besideIt).results;
    expect(textOf(hang!)).toMatch(/timed out after 1000 ms .*killed/);
    expect(textOf(beside!)).toMatch(/shared its worker \(concurrency > 1\) with a call that timed out after 1000 ms/);
    for (const result of later) expect(result.isError, textOf(result)).toBe(false);
  });

  test('a call that fills the heap ends its co-runners with a memory error that says the heap was shared', async () => {
    const tools = await executor({
      tools: [waiter(2)],
      workers: { min: 1, max: 1 },
      limits: { maxMemoryMb: 32, timeoutMs: 20_000 },
    });
    const { results } = await tools.executeBatch([
      call('bomb', 'shared_waiter', { mode: 'fill-heap' }),
      call('beside', 'shared_waiter', { mode: 'wait', ms: 15_000 }),
    ]);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/memory limit \(maxMemoryMb: 32 MB\).*1 other call\(s\) shared its worker/);
    }
  });

  test('a call sent ahead to a busy worker is taken back when another worker goes idle', async () => {
    const tools = await executor({ tools: [waiter()], workers: { min: 2, max: 2 } });
    const { results } = await tools.executeBatch([
      call('long', 'shared_waiter', { mode: 'wait', ms: 3_000 }),
      ...waits(4, 10),
    ]);
    const [long, ...short] = results.map((result) => report(textOf(result)));
    // Had any waited behind the long call, it would have run on the long call's worker after it.
    for (const each of short) expect(each.threadId).not.toBe(long!.threadId);
  });

  test('a concurrency that is not an integer from 1 to 256 is refused with the field named', async () => {
    await expect(executor({ tools: [waiter(0)] })).rejects.toThrow(/concurrency.*an integer from 1 to 256/);
    await expect(executor({ tools: [waiter(1000)] })).rejects.toThrow(/concurrency.*an integer from 1 to 256/);
  });
});
