/**
 * Thread wake-ups per call (not part of `npm run bench`): context switches
 * of every thread of this process (main, workers, libuv and V8 helpers),
 * read from /proc, per trivial call through the same layers as split.ts.
 * Unlike timings, these counts barely move with the machine's load, so
 * they show whether a layer makes threads sleep and wake more often. Also
 * the CPU time of the whole process per call (process.cpuUsage: user and
 * kernel time of all threads), which a sampling profile cannot split well.
 *
 *   node --import tsx bench/profile/switches.ts [calls=5000]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { load, toolpool } from '../lib/toolpool.ts';
import { RawPool, TOOLS, toolCall } from '../lib/fixtures.ts';
import type { WorkerPool as WorkerPoolClass } from '../../src/isolation/worker/worker-pool.ts';
import type { DEFAULT_LIMITS as Limits } from '../../src/core/limits.ts';

const calls = Number(process.argv[2] ?? 5000);

interface Switches {
  voluntary: number;
  involuntary: number;
  /** Per thread (`tid name`): voluntary + involuntary. */
  byThread: Map<string, [number, number]>;
}

function switches(): Switches {
  const out: Switches = { voluntary: 0, involuntary: 0, byThread: new Map() };
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      const name = /Name:\s+(.*)/.exec(status)?.[1] ?? '?';
      const voluntary = Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const involuntary = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      out.voluntary += voluntary;
      out.involuntary += involuntary;
      out.byThread.set(`${tid} ${name}`, [voluntary, involuntary]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

function busiest(before: Switches, after: Switches): string {
  const rows: Array<[string, number, number]> = [];
  for (const [thread, [v, i]] of after.byThread) {
    const [v0, i0] = before.byThread.get(thread) ?? [0, 0];
    if (v - v0 + (i - i0) > calls / 10) rows.push([thread, (v - v0) / calls, (i - i0) / calls]);
  }
  return rows.map(([thread, v, i]) => `${thread}: ${v.toFixed(2)}+${i.toFixed(2)}`).join(', ');
}

const { createExecutor } = await toolpool();
const { WorkerPool } = await load<{ WorkerPool: typeof WorkerPoolClass }>('src/isolation/worker/worker-pool.ts');
const { DEFAULT_LIMITS } = await load<{ DEFAULT_LIMITS: typeof Limits }>('src/core/limits.ts');
const raw = new RawPool(1);
const rawAsync = new RawPool(1, 'async');
const pool = await WorkerPool.start({
  maxMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
  minWorkers: 1,
  maxWorkers: 1,
  idleTimeoutMs: 30_000,
  env: {},
  execArgv: [],
  hostFunctions: {},
  loadTimeoutMs: 30_000,
});
const executor = await createExecutor({ tools: [TOOLS.noop], workers: { min: 1, max: 1 } });
const module = await raw.module(TOOLS.noop);
const args = { n: 1 };
const ref = { module: new URL(module).pathname, source: TOOLS.noop };
const job = { callId: 'c1', args, limits: DEFAULT_LIMITS, onUpdate: () => undefined };
const call = [toolCall('c1', 'noop', args)];
const variants: Record<string, () => Promise<unknown>> = {
  raw: () => raw.run(module, args),
  'raw-async': () => rawAsync.run(module, args),
  pool: () => pool.execute(job, ref),
  executor: () => executor.executeBatch(call),
};
for (let round = 0; round < 2; round++) {
  for (const [name, run] of Object.entries(variants)) {
    for (let i = 0; i < 200; i++) await run();
    const before = switches();
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < calls; i++) await run();
    const ms = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const after = switches();
    if (round === 0) continue;
    console.log(
      `${name.padEnd(10)} ${((after.voluntary - before.voluntary) / calls).toFixed(2)} voluntary + ${((after.involuntary - before.involuntary) / calls).toFixed(2)} involuntary switches per call, ${((ms * 1000) / calls).toFixed(1)} µs per call, CPU (all threads) ${(used.user / calls).toFixed(1)} user + ${(used.system / calls).toFixed(1)} system µs per call  [${busiest(before, after)}]`,
    );
  }
}
await Promise.all([raw.close(), rawAsync.close(), pool.close(), executor.close()]);
