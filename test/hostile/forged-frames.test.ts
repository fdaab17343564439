/**
 * A tool in the process tier (the sandbox's child is the same) can write
 * raw frames to its child's channel descriptor. The host checks what
 * arrives in time and memory proportional to its bytes: a shared
 * reference counts each time it appears (as the worker tier counts it), so
 * a frame of a few hundred bytes cannot stand for 2^40 nodes or 125 MiB.
 */
import { describe, expect, test } from 'vitest';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const createExecutor = useExecutors();

describe('forged frames from a process-tier tool', () => {
  // The ids are the host's request counter: the first call of a fresh executor is request 1.
  test('a 40-level DAG as details against a recursive outputSchema does not freeze the host', async () => {
    const executor = await createExecutor({
      tools: [fixture('walls/forge-frame.ts')],
      limits: { maxResultBytes: 1 << 20 },
    });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const { results } = await executor.executeBatch([call('c', 'forge_frame', { id: 1, mode: 'dag' })]);
      expect(results[0]!.isError).toBe(true);
      expect(textOf(results[0]!)).toMatch(/too large|expand|shared references/i);
    } finally {
      clearInterval(timer);
    }
    // The host's loop kept turning while the frame was checked (a frozen loop runs no timer at all).
    expect(ticks).toBeGreaterThan(0);
    // And the next call is served.
    const { results } = await executor.executeBatch([call('d', 'forge_frame', { id: 99_999, mode: 'parts' })]);
    expect(results[0]).toBeDefined();
  });

  test('one 64 KiB part repeated 2,000 times by reference counts as 125 MiB against maxResultBytes', async () => {
    const executor = await createExecutor({
      tools: [fixture('walls/forge-frame.ts')],
      limits: { maxResultBytes: 1 << 20 },
    });
    const { results } = await executor.executeBatch([call('c', 'forge_frame', { id: 1, mode: 'parts' })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/too large|expand|shared references/i);
    expect(textOf(results[0]!).length).toBeLessThan(10_000);
  });
});
