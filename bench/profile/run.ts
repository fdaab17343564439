/**
 * Profiling helper (not part of `npm run bench`): runs one hot loop so a CPU
 * profile shows where a call's time goes, on the host and in the workers.
 *
 *   node --cpu-prof --cpu-prof-dir=bench/results --cpu-prof-interval 50 \
 *     --import tsx bench/profile/run.ts worker|inline|throughput|updates|raw|raw-async|pi [seconds]
 *   node --import tsx bench/profile/summarize.ts bench/results/<file>.cpuprofile
 *
 * With BENCH_WORKER_PROF=1 the pool's workers get the same flags (through
 * the pool's execArgv, which createExecutor does not expose, so this script
 * sets it on the PoolSet before the first pool is made). Like the bench, it
 * measures toolpool compiled to JavaScript (BENCH_SOURCE=1: the sources).
 */
import { resolve } from 'node:path';
import type { PoolSet as PoolSetClass } from '../../src/isolation/worker/pool-set.ts';
import noop from '../tools/noop.ts';
import { RawPool, TOOLS, calls, toolCall } from '../lib/fixtures.ts';
import { piPeer } from '../lib/pi.ts';
import { load, toolpool } from '../lib/toolpool.ts';

const scenario = process.argv[2] ?? 'worker';
const seconds = Number(process.argv[3] ?? 5);

const { createExecutor } = await toolpool();
const { PoolSet } = await load<{ PoolSet: typeof PoolSetClass }>('src/isolation/worker/pool-set.ts');
const workerFlags = ['--cpu-prof', `--cpu-prof-dir=${resolve('bench/results')}`, '--cpu-prof-interval', '50'];
if (process.env.BENCH_WORKER_PROF === '1') {
  const flags = workerFlags;
  const get = PoolSet.prototype.get;
  PoolSet.prototype.get = function (this: PoolSetClass, maxMemoryMb: number) {
    (this as unknown as { options: { execArgv: string[] } }).options.execArgv = flags;
    return get.call(this, maxMemoryMb);
  };
}

const until = performance.now() + seconds * 1000;
let count = 0;
const one = [toolCall('c1', 'noop', { n: 1 })];
if (scenario === 'worker' || scenario === 'throughput') {
  const executor = await createExecutor({
    tools: [TOOLS.noop],
    workers: scenario === 'worker' ? { min: 1, max: 1 } : { min: 2, max: 2 },
  });
  const batch = scenario === 'worker' ? one : calls(100, 'noop', { n: 1 });
  while (performance.now() < until) {
    await executor.executeBatch(batch);
    count += batch.length;
  }
  await executor.close();
} else if (scenario === 'inline') {
  const executor = await createExecutor({ tools: [noop] });
  executor.subscribe(() => undefined);
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) await executor.executeBatch(one);
    count += 1000;
  }
  await executor.close();
} else if (scenario === 'pi') {
  const pi = (await piPeer()).harness(['noop']);
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) await pi.batch(one);
    count += 1000;
  }
} else if (scenario === 'updates') {
  const executor = await createExecutor({ tools: [TOOLS.updates], workers: { min: 1, max: 1 } });
  let delivered = 0;
  executor.subscribe((event) => void (event.type === 'tool_update' && delivered++));
  while (performance.now() < until) {
    await executor.executeBatch([toolCall('flood', 'updates', { mode: 'flood', count: 100_000 })]);
    count += 100_000;
  }
  console.log(`updates: ${delivered} of ${count} delivered`);
  await executor.close();
} else if (scenario === 'raw' || scenario === 'raw-async') {
  const raw = new RawPool(
    1,
    scenario === 'raw' ? 'sync' : 'async',
    process.env.BENCH_WORKER_PROF === '1' ? workerFlags : [],
  );
  const module = await raw.module(TOOLS.noop);
  while (performance.now() < until) {
    await raw.run(module, { n: 1 });
    count++;
  }
  await raw.close();
}
console.log(`${scenario}: ${count} calls in ${seconds} s (${((seconds * 1e6) / count).toFixed(1)} µs per call)`);
