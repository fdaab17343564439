import type { HostFunctions } from '../tool.ts';
import { defaultWorkerCount, WorkerPool } from './worker-pool.ts';

export interface PoolSetOptions {
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  env: Record<string, string>;
  execArgv: string[];
  hostFunctions: HostFunctions;
}

/**
 * Worker pools keyed by heap limit: a worker's heap limit is fixed when it
 * starts, so tools with different `maxMemoryMb` need different pools. Each
 * pool is created on first use.
 */
export class PoolSet {
  readonly #pools = new Map<number, Promise<WorkerPool>>();

  constructor(private readonly options: PoolSetOptions) {}

  static defaults(): Pick<PoolSetOptions, 'minWorkers' | 'maxWorkers' | 'idleTimeoutMs'> {
    return { minWorkers: 1, maxWorkers: defaultWorkerCount(), idleTimeoutMs: 30_000 };
  }

  get(maxMemoryMb: number): Promise<WorkerPool> {
    let pool = this.#pools.get(maxMemoryMb);
    if (!pool) {
      pool = WorkerPool.start({ ...this.options, maxMemoryMb });
      this.#pools.set(maxMemoryMb, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const pools = await Promise.allSettled(this.#pools.values());
    this.#pools.clear();
    await Promise.all(pools.map((p) => (p.status === 'fulfilled' ? p.value.close() : undefined)));
  }
}
