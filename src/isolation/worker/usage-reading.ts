import { Worker } from 'node:worker_threads';
import type { RunUsage } from '../../core/runner.ts';
import type { WorkerUsage } from './protocol.ts';

/**
 * The CPU and heap figures of a call, as the host can vouch for them. What
 * a worker reports of its own call is the tool's to forge, so where the
 * line lets the host read a worker thread from outside (Node 22+:
 * `worker.cpuUsage()`, `worker.getHeapStatistics()`) the host's own
 * reading is used and the worker's ignored. Where it cannot (Node 20)
 * there is no cpuMs at all, and the worker's heap figure is shown only if
 * it fits the worker's heap limit.
 */
type MeasurableWorker = Worker & {
  cpuUsage?: (previous?: NodeJS.CpuUsage) => Promise<NodeJS.CpuUsage>;
  getHeapStatistics?: () => Promise<{ used_heap_size: number }>;
};

const workerPrototype = Worker.prototype as MeasurableWorker;
/** This line can read a worker thread's CPU time from outside it. */
export const HOST_READS_CPU = typeof workerPrototype.cpuUsage === 'function';
/** This line can read a worker's heap from outside it: the worker need not report it. */
export const HOST_READS_HEAP = typeof workerPrototype.getHeapStatistics === 'function';

/** Above the old generation's limit a heap also holds the young generation and code: room for those. */
const HEAP_SLACK_MB = 64;

/** The most a heap figure may say for a worker whose old generation is `maxMemoryMb`. */
export function heapBoundBytes(maxMemoryMb: number): number {
  return (maxMemoryMb + HEAP_SLACK_MB) * 2 ** 20;
}

/** The worker thread's CPU clock when a call began, read from outside; undefined where the line cannot. */
export function cpuAtBegin(worker: Worker): Promise<NodeJS.CpuUsage> | undefined {
  if (!HOST_READS_CPU) return undefined;
  const reading = (worker as MeasurableWorker).cpuUsage!();
  reading.catch(() => undefined); // a worker that dies first has no reading; its call ends without one
  return reading;
}

/**
 * The call's cpuMs and heapUsedBytes: the host's own readings where the
 * line has them, bounded by what it measured (a thread cannot use more CPU
 * than the wall time it ran); otherwise only a worker heap figure that fits.
 */
export async function hostFigures(
  worker: Worker,
  begin: Promise<NodeJS.CpuUsage> | undefined,
  runningMs: number,
  maxMemoryMb: number,
  reported: WorkerUsage | undefined,
): Promise<Pick<RunUsage, 'cpuMs' | 'heapUsedBytes'>> {
  const figures: Pick<RunUsage, 'cpuMs' | 'heapUsedBytes'> = {};
  const measurable = worker as MeasurableWorker;
  const [start, end, heap] = await Promise.all([
    begin?.catch(() => undefined),
    begin ? measurable.cpuUsage!().catch(() => undefined) : undefined,
    HOST_READS_HEAP ? measurable.getHeapStatistics!().catch(() => undefined) : undefined,
  ]);
  if (start && end) figures.cpuMs = Math.min(runningMs, (end.user + end.system - start.user - start.system) / 1000);
  const heapBytes = HOST_READS_HEAP ? heap?.used_heap_size : reported?.heapUsedBytes;
  if (heapBytes !== undefined && heapBytes <= heapBoundBytes(maxMemoryMb)) figures.heapUsedBytes = heapBytes;
  return figures;
}
