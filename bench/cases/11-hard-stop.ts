/**
 * Case 11 (issue 3's target): a tool that busy-loops and ignores its
 * signal, with `timeoutMs: 500`. Measured: the time from the call to its
 * error result (timeout + grace period + kill), and the host's event-loop
 * delay meanwhile. Goal: the result within 2 s, the loop delay under 100 ms.
 */
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { watchEventLoop } from '../lib/event-loop.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'busy loop, timeoutMs 500: time to error result',
  'busy loop: event-loop delay max',
  'busy loop: event-loop delay p99',
] as const;
const TIMEOUT_MS = 500;
const GRACE_MS = 250;

export const hardStop: BenchCase = {
  id: 11,
  title: 'Hard stop of a busy tool',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 4;
    const executor = await createExecutor({
      tools: [TOOLS.busyLoop],
      workers: { min: 1, max: 1 },
      limits: { timeoutMs: TIMEOUT_MS, abortGraceMs: GRACE_MS },
    });
    const times: number[] = [];
    const maxDelays: number[] = [];
    const p99Delays: number[] = [];
    try {
      log(`case 11: ${rounds} busy loops, timeoutMs ${TIMEOUT_MS}, abortGraceMs ${GRACE_MS}`);
      for (let round = 0; round < rounds; round++) {
        const watch = await watchEventLoop();
        const start = process.hrtime.bigint();
        const { results } = await executor.executeBatch([toolCall('busy', 'busy_loop', {})]);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        const delay = await watch.stop();
        maxDelays.push(delay.maxMs);
        p99Delays.push(delay.p99Ms);
        if (!results[0]!.isError || !/timed out after 500 ms/.test(JSON.stringify(results[0]!.content))) {
          throw new Error(`case 11: expected a timeout error result, got ${JSON.stringify(results[0])}`);
        }
      }
    } finally {
      await executor.close();
    }
    const time = summarize(times);
    const worstTime = Math.max(...times);
    const worstDelay = Math.max(...maxDelays);
    return {
      id: 11,
      title: hardStop.title,
      rows: [
        row(ROWS[0], 'ms', time.median, {
          n: time.n,
          note: `worst ${worstTime.toFixed(0)} ms; includes the ${GRACE_MS} ms grace period and the kill`,
        }),
        row(ROWS[1], 'ms', summarize(maxDelays).median, {
          n: maxDelays.length,
          note: `worst ${worstDelay.toFixed(1)} ms`,
        }),
        row(ROWS[2], 'ms', summarize(p99Delays).median, { n: p99Delays.length }),
      ],
      targets: [
        {
          name: 'Busy tool (timeoutMs 500): error result, worst of rounds',
          measured: worstTime,
          shown: `${worstTime.toFixed(0)} ms`,
          goal: '<= 2000 ms',
          met: worstTime <= 2000,
        },
        {
          name: 'Host event-loop delay meanwhile, worst max',
          measured: worstDelay,
          shown: `${worstDelay.toFixed(1)} ms`,
          goal: '< 100 ms',
          met: worstDelay < 100,
        },
      ],
      notes: [],
    };
  },
};
