/**
 * Per-call resource accounting on `tool_end` (issue 10): queuedMs,
 * runningMs, cpuMs and heapUsedBytes. Behaviour only, with generous bounds:
 * what each figure counts, not how fast anything is.
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defineTool, type ToolEndEvent, type ToolEvent } from '../src/index.ts';
import { DEFAULT_LIMITS } from '../src/core/limits.ts';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';
import { PoolSet } from '../src/isolation/worker/pool-set.ts';
import type { RunJob } from '../src/core/runner.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
/** `process.threadCpuUsage` exists on Node 22+ only; on Node 20 no cpuMs is reported. */
const hasThreadCpu = typeof (process as { threadCpuUsage?: unknown }).threadCpuUsage === 'function';

const ends = (events: ToolEvent[]) =>
  new Map(events.flatMap((e) => (e.type === 'tool_end' ? [[e.toolCallId, e] as const] : [])));
const endOf = (events: ToolEvent[], id: string): ToolEndEvent => {
  const end = ends(events).get(id);
  if (!end) throw new Error(`no tool_end for ${id}`);
  return end;
};

const inlineSleeper = defineTool({
  name: 'inline_sleep',
  description: 'Test tool: sleeps on the main thread.',
  parameters: Type.Object({ ms: Type.Integer() }),
  execute: async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  },
});

describe('usage on tool_end', () => {
  test('an inline tool: never queued, its running time, no CPU or heap figure', async () => {
    const executor = await createExecutor({ tools: [inlineSleeper] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('i', 'inline_sleep', { ms: 100 })]);
    const end = endOf(events, 'i');
    expect(end.queuedMs).toBe(0);
    expect(end.runningMs).toBeGreaterThanOrEqual(80);
    expect(end.runningMs).toBeLessThanOrEqual(end.durationMs);
    expect(end).not.toHaveProperty('cpuMs');
    expect(end).not.toHaveProperty('heapUsedBytes');
  });

  test('a worker tool: its running time and the worker heap after the call', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('w', 'probe', { action: 'sleep', ms: 100 })]);
    const end = endOf(events, 'w');
    expect(end.runningMs).toBeGreaterThanOrEqual(80);
    expect(end.queuedMs).toBeGreaterThanOrEqual(0);
    expect(end.queuedMs + end.runningMs).toBeLessThanOrEqual(end.durationMs + 1);
    expect(end.heapUsedBytes).toBeGreaterThan(0);
    expect(Number.isSafeInteger(end.heapUsedBytes)).toBe(true);
  });

  // process.threadCpuUsage is Node 22+.
  test.runIf(hasThreadCpu)('a worker tool burning CPU reports its thread CPU time (Node 22+)', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts'), fixture('cpu-burner.ts')] });
    const events = recordEvents(executor);
    await executor.executeBatch([
      call('idle', 'probe', { action: 'sleep', ms: 50 }),
      call('busy', 'cpu_burner', { ms: 200 }),
    ]);
    const busy = endOf(events, 'busy');
    expect(busy.cpuMs).toBeGreaterThanOrEqual(100);
    expect(busy.cpuMs).toBeLessThanOrEqual(busy.runningMs + 50);
    const idle = endOf(events, 'idle');
    expect(idle.cpuMs).toBeGreaterThanOrEqual(0);
    expect(idle.cpuMs).toBeLessThan(50); // asleep, not burning
  });

  // On Node 20 the worker has no per-thread CPU clock (process.threadCpuUsage is Node 22+).
  test.skipIf(hasThreadCpu)('on Node 20 a worker tool reports no cpuMs', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const events = recordEvents(executor);
    await executor.executeBatch([call('busy', 'probe', { action: 'ignore-signal', ms: 50 })]);
    const end = endOf(events, 'busy');
    expect(end).not.toHaveProperty('cpuMs');
    expect(end.heapUsedBytes).toBeGreaterThan(0);
  });

  test('a call waiting behind another for the only worker counts that wait as queued', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')], workers: { min: 1, max: 1 } });
    const events = recordEvents(executor);
    await executor.executeBatch([
      call('first', 'probe', { action: 'sleep', ms: 200 }),
      call('second', 'probe', { action: 'sleep', ms: 200 }),
    ]);
    const first = endOf(events, 'first');
    const second = endOf(events, 'second');
    expect(first.queuedMs).toBeLessThan(second.queuedMs);
    expect(second.queuedMs).toBeGreaterThanOrEqual(150);
    expect(second.runningMs).toBeGreaterThanOrEqual(180);
  });

  test('calls that never ran have zeros and no CPU or heap figure', async () => {
    const controller = new AbortController();
    const executor = await createExecutor({
      tools: [fixture('probe.ts'), inlineSleeper],
      beforeToolCall: ({ toolCall }) =>
        toolCall.id === 'blocked' ? { block: true, reason: 'not this one' } : undefined,
    });
    const events = recordEvents(executor);
    await executor.executeBatch([
      call('invalid', 'probe', { action: 'no-such-action' }),
      call('unknown', 'no_such_tool', {}),
      call('blocked', 'probe', { action: 'ok' }),
      call('malformed', 'probe', '{not json'),
    ]);
    controller.abort();
    await executor.executeBatch([call('aborted', 'probe', { action: 'ok' })], { signal: controller.signal });
    for (const id of ['invalid', 'unknown', 'blocked', 'malformed', 'aborted']) {
      const end = endOf(events, id);
      expect(end.isError, id).toBe(true);
      expect({ id, queuedMs: end.queuedMs, runningMs: end.runningMs }).toEqual({ id, queuedMs: 0, runningMs: 0 });
      expect(end, id).not.toHaveProperty('cpuMs');
      expect(end, id).not.toHaveProperty('heapUsedBytes');
    }
  });

  test('a call that times out while running still reports how long it ran', async () => {
    const executor = await createExecutor({
      tools: [fixture('probe.ts')],
      // The tool honours its signal: a grace of seconds, so a starved worker is not taken for one that ignores it.
      limits: { timeoutMs: 150, abortGraceMs: 3_000 },
    });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([call('slow', 'probe', { action: 'honour-signal', ms: 5_000 })]);
    expect(textOf(results[0]!)).toMatch(/timed out after 150 ms/);
    const end = endOf(events, 'slow');
    expect(end.runningMs).toBeGreaterThanOrEqual(120);
    expect(end.runningMs).toBeLessThan(5_000);
  });

  test('the process tier relays what the worker in its child measured', async () => {
    const executor = await createExecutor({
      tools: [fixture('probe.ts')],
      isolation: 'process',
      workers: { min: 1, max: 1 },
    });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([
      call('p1', 'probe', { action: 'sleep', ms: 200 }),
      call('p2', 'probe', { action: 'sleep', ms: 200 }),
    ]);
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    for (const id of ['p1', 'p2']) {
      const end = endOf(events, id);
      expect(end.runningMs, id).toBeGreaterThanOrEqual(180);
      expect(end.heapUsedBytes, id).toBeGreaterThan(0);
      if (hasThreadCpu) expect(end.cpuMs, id).toBeGreaterThanOrEqual(0);
      else expect(end, id).not.toHaveProperty('cpuMs');
    }
    // The child's only worker ran them one after the other.
    expect(endOf(events, 'p2').queuedMs).toBeGreaterThanOrEqual(150);
  });

  test('a batch nobody listens to skips the worker reads: the host still times the call', async () => {
    const pools = new PoolSet({
      ...PoolSet.defaults(),
      maxWorkers: 1,
      env: {},
      execArgv: [],
      hostFunctions: {},
      defaultMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
    });
    try {
      const ref = { module: await toRunnableModule(fixture('probe.ts')), source: fixture('probe.ts') };
      const job = (measureUsage: boolean): RunJob => ({
        callId: 'c',
        args: { action: 'sleep', ms: 20 },
        limits: DEFAULT_LIMITS,
        onUpdate: () => {},
        measureUsage,
      });
      const measured = await pools.execute(job(true), ref);
      expect(measured.usage?.heapUsedBytes).toBeGreaterThan(0);
      const unmeasured = await pools.execute(job(false), ref);
      expect(unmeasured.ok).toBe(true);
      expect(unmeasured.usage).toEqual({ queuedMs: expect.any(Number), runningMs: expect.any(Number) });
      expect(unmeasured.usage!.runningMs).toBeGreaterThanOrEqual(15);
    } finally {
      await pools.close();
    }
  });
});
