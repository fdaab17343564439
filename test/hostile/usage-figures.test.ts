/**
 * Usage figures the host can vouch for: what a worker reports of its own
 * call is the tool's to forge, so `cpuMs` and `heapUsedBytes` on
 * `tool_end` come from the host's own reading where the line has one
 * (Node 22+ reads a worker thread's CPU and heap from outside it), are
 * bounded by what the host measured (cpuMs at most runningMs, the heap at
 * most the worker's limit), and are never present where the line cannot
 * measure them (cpuMs on Node 20).
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import type { ToolEndEvent } from '../../src/index.ts';
import { call, fixture, useExecutors } from '../support/executors.ts';

const createExecutor = useExecutors();
// Node 22+ has worker.cpuUsage(): the host reads the worker thread's CPU itself. Node 20 has no way to.
const hostReadsCpu = typeof (Worker.prototype as { cpuUsage?: unknown }).cpuUsage === 'function';
const MAX_MEMORY_MB = 64;

async function endOf(target: string, isolation: 'worker' | 'process'): Promise<ToolEndEvent> {
  const executor = await createExecutor({
    tools: [fixture('hostile/protocol-forgery.ts')],
    isolation,
    limits: { maxMemoryMb: MAX_MEMORY_MB },
  });
  let end: ToolEndEvent | undefined;
  executor.subscribe((event) => void (event.type === 'tool_end' && (end = event)));
  await executor.executeBatch([call('1', 'forge', { target })]);
  return end!;
}

describe.each(['worker', 'process'] as const)('%s tier', (isolation) => {
  test('600 ms of CPU reported as none, with a 4 PiB heap: the host shows what it measured', async () => {
    const end = await endOf('forged-usage-low', isolation);
    if (hostReadsCpu) expect(end.cpuMs).toBeGreaterThanOrEqual(400);
    else expect(end.cpuMs).toBeUndefined();
    if (end.heapUsedBytes !== undefined) expect(end.heapUsedBytes).toBeLessThanOrEqual((MAX_MEMORY_MB + 64) * 2 ** 20);
  });

  test('999,999 ms of CPU claimed by a call of a few milliseconds: never more than its runningMs', async () => {
    const end = await endOf('forged-usage-high', isolation);
    if (hostReadsCpu) expect(end.cpuMs).toBeLessThanOrEqual(end.runningMs);
    else expect(end.cpuMs).toBeUndefined();
  });
});
