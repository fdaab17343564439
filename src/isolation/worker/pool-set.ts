import type { PrepareLimits, ToolTier } from '../../core/tier.ts';
import { withQueuedBefore, type RunJob, type RunOutcome } from '../../core/runner.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import type { ModuleTask } from './protocol.ts';
import { defaultWorkerCount, WorkerPool, type WorkerPoolOptions } from './worker-pool.ts';

export interface PoolSetOptions extends Omit<WorkerPoolOptions, 'maxMemoryMb'> {
  /** Heap limit of the pool that reads tool definitions. */
  defaultMemoryMb: number;
}

/**
 * Worker pools keyed by heap limit: a worker's heap limit is fixed when it
 * starts, so tools with different `maxMemoryMb` need different pools. Each
 * pool is created on first use.
 */
export class PoolSet implements ToolTier {
  readonly #pools = new Map<number, Promise<WorkerPool>>();
  /** The same pools once started, for a lookup without an await on every call. */
  readonly #ready = new Map<number, WorkerPool>();

  constructor(private readonly options: PoolSetOptions) {}

  static defaults(): Pick<PoolSetOptions, 'minWorkers' | 'maxWorkers' | 'idleTimeoutMs' | 'loadTimeoutMs'> {
    return { minWorkers: 1, maxWorkers: defaultWorkerCount(), idleTimeoutMs: 30_000, loadTimeoutMs: 30_000 };
  }

  async describe(ref: ModuleTask): Promise<DefinitionView> {
    return (await this.get(this.options.defaultMemoryMb)).describe(ref);
  }

  async prepare(
    ref: ModuleTask,
    raw: Record<string, unknown>,
    limits: PrepareLimits,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    return (await this.get(limits.maxMemoryMb)).prepare(ref, raw, limits.timeoutMs, signal);
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    return (await this.get(limits.maxMemoryMb)).needsApproval(ref, args, limits.timeoutMs);
  }

  execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    const ready = this.#ready.get(job.limits.maxMemoryMb);
    if (ready) return ready.execute(job, ref);
    // The first call of a heap limit waits for its pool to start: that wait is queue time.
    const handedAt = performance.now();
    return this.get(job.limits.maxMemoryMb).then((pool) => {
      const waitedMs = performance.now() - handedAt;
      return pool.execute(job, ref).then((outcome) => withQueuedBefore(outcome, waitedMs));
    });
  }

  get(maxMemoryMb: number): Promise<WorkerPool> {
    let pool = this.#pools.get(maxMemoryMb);
    if (!pool) {
      pool = WorkerPool.start({ ...this.options, maxMemoryMb });
      // A pool that failed to start must not stay cached: the next call tries again.
      pool.then(
        (started) => this.#ready.set(maxMemoryMb, started),
        () => this.#pools.delete(maxMemoryMb),
      );
      this.#pools.set(maxMemoryMb, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const pools = await Promise.allSettled(this.#pools.values());
    this.#pools.clear();
    this.#ready.clear();
    await Promise.all(pools.map((p) => (p.status === 'fulfilled' ? p.value.close() : undefined)));
  }
}
