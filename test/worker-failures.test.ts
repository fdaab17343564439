import { describe, expect, test } from 'vitest';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
const probe = fixture('probe.ts');

describe('failures in worker tools become error results (S8)', () => {
  test.each([
    ['a thrown error', 'throw', /^probe failed on purpose$/],
    ['a rejected promise', 'reject', /^probe rejected on purpose$/],
    ['process.exit()', 'exit', /^Tool crashed: its worker exited with code 7/],
    ['an uncaught exception in a timer', 'timer-throw', /^thrown from a timer$/],
    [
      'a function inside details',
      'function-in-details',
      /cannot be sent from the worker to the host \(result.details.callback is a function\)/,
    ],
  ])('%s fails only its own call; the rest of the batch and the next call are fine', async (_case, action, message) => {
    const executor = await createExecutor({ tools: [probe], workers: { min: 2, max: 2 } });
    const batch = await executor.executeBatch([
      call('before', 'probe', { action: 'sleep', ms: 30, tag: 'b' }),
      call('bad', 'probe', { action }),
      call('after', 'probe', { action: 'ok', tag: 'a' }),
    ]);
    expect(batch.results.map((r) => r.isError)).toEqual([false, true, false]);
    expect(textOf(batch.results[1]!)).toMatch(message);
    expect(textOf(batch.results[0]!)).toBe('slept 30 b');
    expect(textOf(batch.results[2]!)).toBe('ok a');
    const next = await executor.executeBatch([call('next', 'probe', { action: 'ok' })]);
    expect(next.results[0]!.isError).toBe(false);
  });

  test.each([
    ['an error thrown after the call returned', 'late-throw'],
    ['a rejection after the call returned', 'late-reject'],
  ])('%s is never blamed on a later, innocent call', async (_case, action) => {
    // One worker, so the innocent call runs exactly where the late error fires.
    const executor = await createExecutor({ tools: [probe], workers: { min: 1, max: 1 } });
    const first = await executor.executeBatch([call('guilty', 'probe', { action, ms: 40 })]);
    expect(first.results[0]!.isError).toBe(false);
    const innocent = await executor.executeBatch([call('innocent', 'probe', { action: 'sleep', ms: 120 })]);
    expect(innocent.results[0]!.isError).toBe(false);
    expect(textOf(innocent.results[0]!)).toBe('slept 120');
  });

  test('concurrent crashes each fail their own call only', async () => {
    const executor = await createExecutor({ tools: [probe], workers: { min: 2, max: 2 } });
    const batch = await executor.executeBatch([
      call('1', 'probe', { action: 'exit' }),
      call('2', 'probe', { action: 'ok', tag: 'two' }),
      call('3', 'probe', { action: 'throw' }),
      call('4', 'probe', { action: 'exit' }),
      call('5', 'probe', { action: 'ok', tag: 'five' }),
    ]);
    expect(batch.results.map((r) => r.isError)).toEqual([true, false, true, true, false]);
    expect(batch.results.map(textOf)[1]).toBe('ok two');
    expect(batch.results.map(textOf)[4]).toBe('ok five');
  });

  test('a replacement worker imports the tools before its first call', async () => {
    const executor = await createExecutor({ tools: [probe, fixture('load-clock.ts')], workers: { min: 1, max: 1 } });
    await executor.executeBatch([call('warm', 'load_clock')]);
    const crash = await executor.executeBatch([call('crash', 'probe', { action: 'exit' })]);
    expect(crash.results[0]!.isError).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // a model turn, say
    const { results } = await executor.executeBatch([call('after', 'load_clock')]);
    // Imported when the replacement started, not when this call arrived.
    expect((results[0]!.details as { msSinceLoad: number }).msSinceLoad).toBeGreaterThanOrEqual(200);
  });

  test('a result with a __proto__ key does not pollute the host', async () => {
    const executor = await createExecutor({ tools: [probe] });
    const { results } = await executor.executeBatch([call('1', 'probe', { action: 'proto-key' })]);
    expect(results[0]!.isError).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const details = results[0]!.details as Record<string, unknown>;
    expect(Object.getPrototypeOf(details)).toBe(Object.prototype);
    expect(details.plain).toBe(1);
  });

  test('module tools run in workers, never on the main thread', async () => {
    const executor = await createExecutor({ tools: [probe] });
    const { results } = await executor.executeBatch([call('1', 'probe', { action: 'where' })]);
    expect(results[0]!.details).toMatchObject({ isMainThread: false });
  });
});

describe('abort through executeBatch({ signal })', () => {
  test('reaches a running tool through ctx.signal, and calls not yet started get an "aborted" result', async () => {
    const executor = await createExecutor({ tools: [probe], workers: { min: 1, max: 1 }, toolExecution: 'sequential' });
    const events = recordEvents(executor);
    const controller = new AbortController();
    // Aborted once it runs (its first update): a timed abort could come while a loaded machine still starts it.
    const { results } = await executor.executeBatch(
      [call('running', 'probe', { action: 'honour-signal', ms: 10_000 }), call('queued', 'probe', { action: 'ok' })],
      { signal: controller.signal, onEvent: (event) => void (event.type === 'tool_update' && controller.abort()) },
    );
    expect(results.map((r) => r.isError)).toEqual([true, true]);
    expect(textOf(results[0]!)).toBe('Tool call aborted: the tool stopped when its signal fired.');
    expect(textOf(results[1]!)).toBe('Tool call aborted before it started.');
    expect(events.filter((e) => e.type === 'tool_end')).toHaveLength(2);
  });

  test('a tool that ignores its signal is killed after the grace period and the pool keeps serving', async () => {
    const executor = await createExecutor({
      tools: [probe],
      workers: { min: 1, max: 1 },
      limits: { abortGraceMs: 100 },
    });
    const controller = new AbortController();
    // Aborted once it runs: an abort while a loaded machine still started the worker would be another case.
    const { results } = await executor.executeBatch([call('busy', 'probe', { action: 'ignore-signal', ms: 60_000 })], {
      signal: controller.signal,
      onEvent: (event) => void (event.type === 'tool_update' && controller.abort()),
    });
    expect(textOf(results[0]!)).toBe(
      'Tool call aborted: the tool ignored its signal and was killed after the grace period.',
    );
    const next = await executor.executeBatch([call('next', 'probe', { action: 'ok' })]);
    expect(textOf(next.results[0]!)).toBe('ok');
  });

  test('an already aborted signal runs nothing', async () => {
    const executor = await createExecutor({ tools: [probe] });
    const { results } = await executor.executeBatch([call('1', 'probe', { action: 'ok' })], {
      signal: AbortSignal.abort(),
    });
    expect(textOf(results[0]!)).toBe('Tool call aborted before it started.');
  });
});
