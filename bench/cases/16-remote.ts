/**
 * Case 16: tools across machines on BullMQ (issue 17). Worker machines are
 * processes of their own on this machine, talking through a redis-server of
 * the case's own:
 * - a trivial call through toolpool/bullmq (host validation and events, the
 *   queue, the worker machine's executor and its worker thread, the answer
 *   through the event stream) against a raw BullMQ round trip (add, a plain
 *   worker that answers at once, its completed event), one at a time, in
 *   interleaved rounds;
 * - 200 of each in flight at once;
 * - a 5 ms CPU tool, 40 calls in one batch, on two worker processes against
 *   one (each runs one call at a time);
 * - progress latency: onUpdate on the worker machine → tool_update on the
 *   host (process.hrtime is the machine's monotonic clock, the same in every
 *   process).
 */
import type { Executor, ToolEvent } from '../../src/index.ts';
import { nowNs } from '../lib/clock.ts';
import { TOOLS, calls, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { startQueueMachine, type QueueMachine } from '../lib/queue-machines.ts';
import { RawBullmq } from '../lib/raw-bullmq.ts';
import { startRedis } from '../lib/redis-server.ts';
import { median, summarize } from '../lib/stats.ts';
import { load, toolpool } from '../lib/toolpool.ts';
import { row, type BenchCase } from '../lib/types.ts';

type Bullmq = typeof import('../../src/adapters/bullmq/index.ts');

const ROWS = [
  'raw BullMQ round trip',
  'toolpool/bullmq trivial call',
  '200 in flight, raw BullMQ',
  '200 in flight, toolpool/bullmq',
  '5 ms CPU tool x 40, 1 worker process',
  '5 ms CPU tool x 40, 2 worker processes',
  'progress: onUpdate → tool_update',
] as const;

/** Calls each worker machine of the trivial rows runs at once, raw BullMQ's and toolpool's alike. */
const CONCURRENCY = 4;
const IN_FLIGHT = 200;

export const remoteCalls: BenchCase = {
  id: 16,
  title: 'Tools across machines on BullMQ (worker processes, local redis-server)',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const { remoteRunner } = await load<Bullmq>('src/adapters/bullmq/index.ts');
    const redis = await startRedis();
    const machines: QueueMachine[] = [];
    const executors: Executor[] = [];
    const raw = new RawBullmq(redis.url, 'raw');
    try {
      machines.push(
        ...(await Promise.all([
          startQueueMachine('raw', redis.url, 'raw', CONCURRENCY),
          startQueueMachine('toolpool', redis.url, 'trivial', CONCURRENCY),
          startQueueMachine('toolpool', redis.url, 'cpu1', 1),
          startQueueMachine('toolpool', redis.url, 'cpu2', 1),
          startQueueMachine('toolpool', redis.url, 'cpu2', 1),
        ])),
      );
      const host = async (queue: string) => {
        const executor = await createExecutor({
          tools: [TOOLS.noop, TOOLS.updates, TOOLS.cpuMs],
          remote: remoteRunner({ connection: redis.url, queue }),
        });
        executors.push(executor);
        return executor;
      };
      const [trivial, cpu1, cpu2] = await Promise.all([host('trivial'), host('cpu1'), host('cpu2')]);
      await raw.ready();
      const rounds = quick ? 1 : 12;
      const perBlock = quick ? 10 : 150;
      const inFlight = quick ? 20 : IN_FLIGHT;
      const cpuCalls = quick ? 4 : 40;
      const noop = [toolCall('c1', 'noop', { n: 1 })];
      const many = calls(inFlight, 'noop', { n: 1 });
      const cpu = calls(cpuCalls, 'cpu_ms', { ms: 5 });
      log(`case 16: ${rounds} rounds x ${perBlock} calls; ${inFlight} in flight; ${cpuCalls} CPU calls per batch`);
      const oneAtATime = await interleave(
        {
          raw: () => timeEach(perBlock, () => raw.run(1)),
          remote: () => timeEach(perBlock, () => trivial.executeBatch(noop)),
        },
        { rounds, warmupRounds: 1 },
      );
      /** One sample: calls per second of `count` calls started at once. */
      const rate = (count: number, run: () => Promise<unknown>) => async () => {
        const start = nowNs();
        await run();
        return [count / ((nowNs() - start) / 1e9)];
      };
      const throughput = await interleave(
        {
          raw: rate(inFlight, () => Promise.all(Array.from({ length: inFlight }, (_, i) => raw.run(i)))),
          remote: rate(inFlight, () => trivial.executeBatch(many)),
        },
        { rounds: quick ? 1 : 8, warmupRounds: 1 },
      );
      const batchMs = (executor: Executor) => async () =>
        (await timeEach(1, () => executor.executeBatch(cpu))).map((us) => us / 1e3);
      const scaling = await interleave(
        { one: batchMs(cpu1), two: batchMs(cpu2) },
        { rounds: quick ? 1 : 8, warmupRounds: 1 },
      );
      const latencies = await progressLatencies(trivial, quick ? 5 : 200);

      const trip = ratioOf(oneAtATime.remote, oneAtATime.raw);
      const flow = ratioOf(throughput.remote, throughput.raw);
      const speedup = ratioOf(scaling.one, scaling.two);
      const s = {
        raw: summarize(oneAtATime.raw.samples),
        remote: summarize(oneAtATime.remote.samples),
        rawRate: median(throughput.raw.samples),
        remoteRate: median(throughput.remote.samples),
        one: summarize(scaling.one.samples),
        two: summarize(scaling.two.samples),
        latency: summarize(latencies),
      };
      return {
        id: 16,
        title: remoteCalls.title,
        rows: [
          row(ROWS[0], 'µs', s.raw.median, {
            p99: s.raw.p99,
            n: s.raw.n,
            note: 'Queue.add → plain Worker answers at once → QueueEvents completed',
          }),
          row(ROWS[1], 'µs', s.remote.median, {
            p99: s.remote.p99,
            n: s.remote.n,
            vs: { row: ROWS[0], ratio: trip.value, range: trip.range },
            note: 'executeBatch of one noop call; toolpool worker process, worker tier',
          }),
          row(ROWS[2], 'calls/s', s.rawRate, {
            n: throughput.raw.samples.length,
            note: `${inFlight} jobs added at once, worker concurrency ${CONCURRENCY}`,
          }),
          row(ROWS[3], 'calls/s', s.remoteRate, {
            n: throughput.remote.samples.length,
            vs: { row: ROWS[2], ratio: flow.value, range: flow.range },
            note: `one batch of ${inFlight} noop calls`,
          }),
          row(ROWS[4], 'ms', s.one.median, {
            p99: s.one.p99,
            n: s.one.n,
            note: `${cpuCalls} calls per batch, one call at a time per process`,
          }),
          row(ROWS[5], 'ms', s.two.median, {
            p99: s.two.p99,
            n: s.two.n,
            vs: {
              row: ROWS[4],
              ratio: s.two.median / s.one.median,
              range: [1 / speedup.range[1], 1 / speedup.range[0]],
            },
          }),
          row(ROWS[6], 'µs', s.latency.median, {
            p99: s.latency.p99,
            n: s.latency.n,
            note: 'one update every 2 ms; process.hrtime on the worker machine → listener on the host',
          }),
        ],
        targets: [
          {
            name: 'Trivial remote call vs raw BullMQ round trip',
            measured: trip.value,
            shown: `${trip.value.toFixed(2)}x`,
            goal: '<= 1.50x',
            met: trip.value <= 1.5,
          },
          {
            name: `${inFlight} trivial calls in flight vs raw BullMQ throughput`,
            measured: flow.value,
            shown: `${flow.value.toFixed(2)}x`,
            goal: '>= 0.50x',
            met: flow.value >= 0.5,
          },
          {
            name: '5 ms CPU tool, 2 worker processes vs 1',
            measured: speedup.value,
            shown: `${speedup.value.toFixed(2)}x faster`,
            goal: '>= 1.60x',
            met: speedup.value >= 1.6,
          },
          {
            // Issue 27: the remote tier's progress stays under a millisecond.
            name: 'Progress across machines: onUpdate → tool_update, median',
            measured: s.latency.median,
            shown: `${Math.round(s.latency.median)} µs`,
            goal: '< 1000 µs',
            met: s.latency.median < 1000,
          },
        ],
        notes: [
          `Worker machines are processes on the same ${'2-core'} machine as the host and Redis, which share its CPUs.`,
        ],
      };
    } finally {
      await Promise.all(executors.map((executor) => executor.close()));
      await raw.close();
      await Promise.all(machines.map((machine) => machine.stop()));
      await redis.stop();
    }
  },
};

/** `count` paced updates of one call: the time from each onUpdate on the worker machine to its tool_update here, in µs. */
async function progressLatencies(executor: Executor, count: number): Promise<number[]> {
  const latencies: number[] = [];
  const onEvent = (event: ToolEvent) => {
    if (event.type !== 'tool_update') return;
    const sentAt = (event.partial.details as { sentAt?: number }).sentAt;
    if (sentAt !== undefined) latencies.push((nowNs() - sentAt) / 1e3);
  };
  await executor.executeBatch([toolCall('paced', 'updates', { mode: 'paced', count, intervalMs: 2 })], { onEvent });
  return latencies;
}
