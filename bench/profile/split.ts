/**
 * Where a trivial worker call's time goes (not part of `npm run bench`):
 * the same call through four layers, interleaved in one process, one
 * worker each. Differences between neighbours attribute the overhead.
 *
 *   raw         piscina.run(), piscina's default atomics ('sync'), sync handler
 *   raw-async   the same with atomics: 'async' (what toolpool's pools use)
 *   pool        toolpool's WorkerPool.execute(): the host call table, stop
 *               timer, task object; in the worker the tool-worker entry,
 *               RunningCall, AsyncLocalStorage, payload check, reply
 *   executor    executor.executeBatch(): adds the batch (arguments copy,
 *               validation, events, result messages)
 *
 *   node --import tsx bench/profile/split.ts [rounds=15] [callsPerBlock=400]
 *   node --import tsx bench/profile/split.ts --throughput [rounds=15] [batchesPerBlock=6]
 *
 * --throughput: 100 calls in flight on two workers (case 2) instead of one
 * call at a time on one; samples are µs per call (lower is better).
 */
import { load, toolpool } from '../lib/toolpool.ts';
import { RawPool, TOOLS, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import type { WorkerPool as WorkerPoolClass } from '../../src/isolation/worker/worker-pool.ts';
import type { DEFAULT_LIMITS as Limits } from '../../src/core/limits.ts';

const throughputMode = process.argv[2] === '--throughput';
const [roundsArg, perBlockArg] = process.argv.slice(throughputMode ? 3 : 2);
const rounds = Number(roundsArg ?? 15);
const perBlock = Number(perBlockArg ?? (throughputMode ? 6 : 400));
const workers = throughputMode ? 2 : 1;
const inFlight = throughputMode ? 100 : 1;
const { createExecutor } = await toolpool();
const { WorkerPool } = await load<{ WorkerPool: typeof WorkerPoolClass }>('src/isolation/worker/worker-pool.ts');
const { DEFAULT_LIMITS } = await load<{ DEFAULT_LIMITS: typeof Limits }>('src/core/limits.ts');

const raw = new RawPool(workers);
const rawAsync = new RawPool(workers, 'async');
const pool = await WorkerPool.start({
  maxMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
  minWorkers: workers,
  maxWorkers: workers,
  idleTimeoutMs: 30_000,
  env: {},
  execArgv: [],
  hostFunctions: {},
  loadTimeoutMs: 30_000,
});
const executor = await createExecutor({ tools: [TOOLS.noop], workers: { min: workers, max: workers } });
const module = await raw.module(TOOLS.noop);
const ref = { module: new URL(module).pathname, source: TOOLS.noop };
const args = { n: 1 };
const call = Array.from({ length: inFlight }, (_, i) => toolCall(`c${i}`, 'noop', args));
const jobs = call.map(({ id }) => ({ callId: id, args, limits: DEFAULT_LIMITS, onUpdate: () => undefined }));
/** µs per call: one call at a time, or 100 in flight. */
const measure = async (run: () => Promise<unknown>) => {
  if (!throughputMode) return timeEach(perBlock, run);
  const samples = await timeEach(perBlock, run);
  return samples.map((us) => us / inFlight);
};

const result = await interleave(
  {
    raw: () => measure(() => Promise.all(jobs.map(() => raw.run(module, args)))),
    'raw-async': () => measure(() => Promise.all(jobs.map(() => rawAsync.run(module, args)))),
    pool: () => measure(() => Promise.all(jobs.map((job) => pool.execute(job, ref)))),
    executor: () => measure(() => executor.executeBatch(call)),
  },
  // SPLIT_GC=1: a forced full GC before each block (see InterleaveOptions.gcBetween: it skews the ratios).
  { rounds, warmupRounds: 1, gcBetween: process.env.SPLIT_GC === '1' },
);
for (const [name, samples] of Object.entries(result)) {
  const s = summarize(samples.samples);
  const r = ratioOf(samples, result.raw);
  console.log(
    `${name.padEnd(10)} median ${s.median.toFixed(1).padStart(6)} µs  p99 ${s.p99.toFixed(0).padStart(5)} µs  ${r.value.toFixed(2)}x raw (rounds ${r.range[0].toFixed(2)}–${r.range[1].toFixed(2)})`,
  );
}
await Promise.all([raw.close(), rawAsync.close(), pool.close(), executor.close()]);
