/**
 * Where the CPU of a remote call goes (not part of `npm run bench`): the
 * CPU time per call of the host process, the worker machine's process and
 * redis-server, for raw BullMQ (Queue.add → a plain Worker → QueueEvents)
 * and for toolpool/bullmq (executeBatch → serveQueue → the event stream),
 * one call at a time and 200 in flight. On a machine where all three share
 * two cores, the sum bounds the throughput; CPU time moves far less with
 * the machine's load than case 16's wall-clock figures.
 *
 *   node --import tsx bench/profile/remote.ts [calls=2000]
 *
 * With REMOTE_CPU_PROF=<folder>, the worker machines write V8 CPU profiles
 * there (`--cpu-prof`) when they stop; the host's own profile comes from
 * running this script with `--cpu-prof`. REMOTE_VARIANTS=<text> runs only
 * the variants whose name contains it (e.g. "toolpool, 200").
 */
import { Redis } from 'ioredis';
import type { Executor } from '../../src/index.ts';
import { calls, TOOLS, toolCall } from '../lib/fixtures.ts';
import { commandOf, descendants, diff, usageOf } from '../lib/proc-usage.ts';
import { startQueueMachine } from '../lib/queue-machines.ts';
import { RawBullmq } from '../lib/raw-bullmq.ts';
import { startRedis } from '../lib/redis-server.ts';
import { load, toolpool } from '../lib/toolpool.ts';

type Bullmq = typeof import('../../src/adapters/bullmq/index.ts');

const count = Number(process.argv[2] ?? 2000);
const IN_FLIGHT = 200;
const CONCURRENCY = 4;

const { createExecutor } = await toolpool();
const { remoteRunner } = await load<Bullmq>('src/adapters/bullmq/index.ts');
const redis = await startRedis();
const [rawMachine, toolpoolMachine] = await Promise.all([
  startQueueMachine('raw', redis.url, 'raw', CONCURRENCY),
  startQueueMachine('toolpool', redis.url, 'trivial', CONCURRENCY),
]);
const redisPid = descendants().find((pid) => commandOf(pid) === 'redis-server');
if (redisPid === undefined) throw new Error('no redis-server among this process’s children');
const raw = new RawBullmq(redis.url, 'raw');
await raw.ready();
const host: Executor = await createExecutor({
  tools: [TOOLS.noop],
  remote: remoteRunner({ connection: redis.url, queue: 'trivial' }),
});

/** Redis's count of calls per command (INFO commandstats), e.g. { evalsha: 12, exists: 4 }. */
const stats = new Redis(redis.url);
async function commandCounts(): Promise<Map<string, number>> {
  const info = await stats.info('commandstats');
  return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((match) => [match[1]!, Number(match[2])]));
}
function commandsPerCall(before: Map<string, number>, after: Map<string, number>): string {
  const counts = [...after]
    .map(([name, calls]) => [name, (calls - (before.get(name) ?? 0)) / count] as const)
    .filter(([name, perCall]) => perCall >= 0.05 && name !== 'info')
    .sort((a, b) => b[1] - a[1]);
  const total = counts.reduce((sum, [, perCall]) => sum + perCall, 0);
  return `${total.toFixed(2)} (${counts.map(([name, perCall]) => `${name} ${perCall.toFixed(2)}`).join(', ')})`;
}

const noop = [toolCall('c1', 'noop', { n: 1 })];
const many = calls(IN_FLIGHT, 'noop', { n: 1 });
const variants = {
  'raw, one at a time': async () => {
    for (let i = 0; i < count; i++) await raw.run(i);
  },
  'toolpool, one at a time': async () => {
    for (let i = 0; i < count; i++) await host.executeBatch(noop);
  },
  [`raw, ${IN_FLIGHT} in flight`]: async () => {
    for (let i = 0; i < count; i += IN_FLIGHT)
      await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => raw.run(i + j)));
  },
  [`toolpool, ${IN_FLIGHT} in flight`]: async () => {
    for (let i = 0; i < count; i += IN_FLIGHT) await host.executeBatch(many);
  },
};

/** REMOTE_VARIANTS=<text>: only the variants whose name contains it (e.g. "toolpool, 200"). */
const only = process.env.REMOTE_VARIANTS;
const per = (ns: number) => (ns / 1000 / count).toFixed(1).padStart(7);
for (const round of [0, 1]) {
  for (const [name, run] of Object.entries(variants).filter(([name]) => !only || name.includes(only))) {
    const machine = name.startsWith('raw') ? rawMachine.pid : toolpoolMachine.pid;
    await run(); // warm-up: V8 optimizes meanwhile, so its compiler threads' CPU is not counted below
    const commands = await commandCounts();
    const before = { host: usageOf([process.pid]), machine: usageOf([machine]), redis: usageOf([redisPid]) };
    const start = performance.now();
    await run();
    const wallUs = ((performance.now() - start) * 1000) / count;
    const machineUsage = diff(before.machine, usageOf([machine]));
    const spent = {
      host: diff(before.host, usageOf([process.pid])).runNs,
      machine: machineUsage.runNs,
      redis: diff(before.redis, usageOf([redisPid])).runNs,
    };
    console.log(
      `round ${round} ${name.padEnd(26)} CPU µs/call: host ${per(spent.host)}, machine ${per(spent.machine)},` +
        ` redis ${per(spent.redis)}, all ${per(spent.host + spent.machine + spent.redis)};` +
        ` wall ${wallUs.toFixed(1)} µs/call`,
    );
    const threads = [...machineUsage.threads].filter(([, ns]) => ns / count > 2_000).sort((a, b) => b[1] - a[1]);
    console.log(`  Redis commands per call: ${commandsPerCall(commands, await commandCounts())}`);
    console.log(`  machine threads (µs/call): ${threads.map(([name, ns]) => `${name} ${per(ns).trim()}`).join(', ')}`);
  }
}
await host.close();
await raw.close();
stats.disconnect();
await Promise.all([rawMachine.stop(), toolpoolMachine.stop()]);
await redis.stop();
process.exit(0);
