/**
 * Case 5: the progress relay. Throughput: one worker tool calls onUpdate
 * in a tight synchronous loop; how many updates per second reach a
 * `tool_update` listener on the host, how many were coalesced (latest wins,
 * by design, when the host falls behind), and what the host's event loop
 * sees meanwhile. The same flood from an inline tool is the in-process
 * reference. Latency: at a modest rate (one update every 2 ms), the time
 * from onUpdate in the worker to the listener, on the monotonic clock all
 * threads share.
 */
import type { ToolEvent } from '../../src/index.ts';
import { toolpool } from '../lib/toolpool.ts';
import updatesTool from '../tools/updates.ts';
import { nowNs, sleep } from '../lib/clock.ts';
import { watchEventLoop } from '../lib/event-loop.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf } from '../lib/interleave.ts';
import { median, summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'flood, inline tool: updates delivered',
  'flood, worker tool: updates delivered',
  'flood, worker tool: share delivered (rest coalesced)',
  'flood, worker tool: event-loop delay p99',
  'flood, worker tool: event-loop delay max',
  'idle loop, same span: event-loop delay p99',
  'paced (500/s), worker tool: onUpdate → tool_update latency',
] as const;

export const progress: BenchCase = {
  id: 5,
  title: 'Progress relay',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const count = quick ? 500 : 400_000; // long enough (~1 s) for the loop-delay histogram to hold hundreds of ticks
    const rounds = quick ? 1 : 4;
    const pacedCount = quick ? 5 : 250;
    const worker = await createExecutor({ tools: [TOOLS.updates], workers: { min: 1, max: 1 } });
    const inline = await createExecutor({ tools: [updatesTool] });
    let delivered = 0;
    const latencies: number[] = [];
    const listener = (event: ToolEvent) => {
      if (event.type !== 'tool_update') return;
      delivered++;
      const sentAt = (event.partial.details as { sentAt?: number }).sentAt;
      if (sentAt !== undefined) latencies.push((nowNs() - sentAt) / 1e3);
    };
    worker.subscribe(listener);
    inline.subscribe(listener);
    try {
      const flood = [toolCall('flood', 'updates', { mode: 'flood', count })];
      const workerShare: number[] = [];
      const workerDelay: number[] = [];
      const workerMax: number[] = [];
      const idleDelay: number[] = [];
      let floodMs = 50;
      /** One sample: updates delivered per second of the call. */
      const measure =
        (executor: typeof worker, isWorker: boolean) =>
        async ({ warmup }: { warmup: boolean }) => {
          delivered = 0;
          const watch = await watchEventLoop();
          const start = nowNs();
          await executor.executeBatch(flood);
          const seconds = (nowNs() - start) / 1e9;
          const loop = await watch.stop();
          if (isWorker) floodMs = seconds * 1e3;
          if (isWorker && !warmup) {
            workerShare.push(delivered / count);
            workerDelay.push(loop.p99Ms);
            workerMax.push(loop.maxMs);
          }
          return [delivered / seconds];
        };
      log(`case 5: ${rounds} rounds, flood of ${count} updates; ${pacedCount} paced updates`);
      /** The same loop with nothing to do, over as long as the worker's flood took. */
      const idle = async ({ warmup }: { warmup: boolean }) => {
        const watch = await watchEventLoop();
        await sleep(floodMs);
        const loop = await watch.stop();
        if (!warmup) idleDelay.push(loop.p99Ms);
        return [floodMs];
      };
      const result = await interleave(
        { inline: measure(inline, false), worker: measure(worker, true), idle },
        { rounds, warmupRounds: 1 },
      );
      await worker.executeBatch([toolCall('paced', 'updates', { mode: 'paced', count: pacedCount, intervalMs: 2 })]);
      const s = {
        inline: summarize(result.inline.samples),
        worker: summarize(result.worker.samples),
        latency: summarize(latencies),
      };
      const ratio = ratioOf(result.worker, result.inline);
      const rate = s.worker.median;
      const delay = median(workerDelay);
      const idleP99 = median(idleDelay);
      const over = delay - idleP99;
      return {
        id: 5,
        title: progress.title,
        rows: [
          row(ROWS[0], 'updates/s', s.inline.median, {
            n: s.inline.n,
            note: `${count} onUpdate calls on the main thread`,
          }),
          row(ROWS[1], 'updates/s', rate, {
            n: s.worker.n,
            vs: { row: ROWS[0], ratio: ratio.value, range: ratio.range },
            note: `${count} onUpdate calls in a worker`,
          }),
          row(ROWS[2], '%', median(workerShare) * 100, {
            n: workerShare.length,
            note: 'the last update always arrives, before tool_end',
          }),
          row(ROWS[3], 'ms', delay, {
            n: workerDelay.length,
            note: `host event loop while the updates arrive; ${over.toFixed(1)} ms over idle`,
          }),
          row(ROWS[4], 'ms', Math.max(...workerMax), { n: workerMax.length, note: 'largest over rounds' }),
          row(ROWS[5], 'ms', idleP99, { n: idleDelay.length }),
          row(ROWS[6], 'µs', s.latency.median, {
            p99: s.latency.p99,
            n: s.latency.n,
            note: 'process.hrtime in the worker → listener',
          }),
        ],
        targets: [
          {
            name: 'Updates relayed per second, host loop not blocked',
            measured: rate,
            shown: `${Math.round(rate).toLocaleString('en-US')}/s, loop p99 ${over >= 0 ? '+' : ''}${over.toFixed(1)} ms over idle`,
            goal: '>= 100,000/s, p99 <= idle + 5 ms',
            met: rate >= 100_000 && over <= 5,
          },
        ],
        notes: [],
      };
    } finally {
      await Promise.all([worker.close(), inline.close()]);
    }
  },
};
