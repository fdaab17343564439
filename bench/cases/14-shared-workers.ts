/**
 * Case 14: I/O-bound tools sharing a worker (issue 10). 32 calls of a tool
 * that only waits 50 ms, in one batch: in process (an inline tool), on 2
 * workers with `concurrency: 8`, and on 2 workers one call at a time (the
 * same module through the sleep tool, which keeps the default 1).
 */
import { toolpool } from '../lib/toolpool.ts';
import ioWait from '../tools/io-wait.ts';
import { TOOLS, calls } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = ['in process (inline tool)', 'worker tier, concurrency 8', 'worker tier, concurrency 1'] as const;
const WAIT_MS = 50;

export const sharedWorkers: BenchCase = {
  id: 14,
  title: 'I/O-bound tool, 32 calls waiting 50 ms, 2 workers',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 10;
    const batchesPerBlock = quick ? 1 : 3;
    const size = quick ? 8 : 32;
    const inline = await createExecutor({ tools: [ioWait] });
    const shared = await createExecutor({ tools: [TOOLS.ioWait], workers: { min: 2, max: 2 } });
    const single = await createExecutor({ tools: [TOOLS.sleep], workers: { min: 2, max: 2 } });
    try {
      const waits = calls(size, 'io_wait', { ms: WAIT_MS });
      const sleeps = calls(size, 'sleep', { ms: WAIT_MS });
      /** One sample per batch: its wall time in ms. */
      const measure = async (runBatch: () => Promise<unknown>) =>
        (await timeEach(batchesPerBlock, runBatch)).map((us) => us / 1e3);
      log(`case 14: ${rounds} rounds x ${batchesPerBlock} batches of ${size}`);
      const result = await interleave(
        {
          inline: () => measure(() => inline.executeBatch(waits)),
          shared: () => measure(() => shared.executeBatch(waits)),
          single: () => measure(() => single.executeBatch(sleeps)),
        },
        { rounds, warmupRounds: 1 },
      );
      const sharedRatio = ratioOf(result.shared, result.inline);
      const singleRatio = ratioOf(result.single, result.inline);
      const s = {
        inline: summarize(result.inline.samples),
        shared: summarize(result.shared.samples),
        single: summarize(result.single.samples),
      };
      return {
        id: 14,
        title: sharedWorkers.title,
        rows: [
          row(ROWS[0], 'ms', s.inline.median, { p99: s.inline.p99, n: s.inline.n }),
          row(ROWS[1], 'ms', s.shared.median, {
            p99: s.shared.p99,
            n: s.shared.n,
            vs: { row: ROWS[0], ratio: sharedRatio.value, range: sharedRatio.range },
          }),
          row(ROWS[2], 'ms', s.single.median, {
            p99: s.single.p99,
            n: s.single.n,
            vs: { row: ROWS[0], ratio: singleRatio.value, range: singleRatio.range },
          }),
        ],
        targets: [
          {
            name: 'I/O-bound batch, concurrency 8 on 2 workers vs in process',
            measured: sharedRatio.value,
            shown: `${sharedRatio.value.toFixed(2)}x`,
            goal: '<= 4.00x',
            met: sharedRatio.value <= 4,
          },
        ],
        notes: [],
      };
    } finally {
      await Promise.all([inline.close(), shared.close(), single.close()]);
    }
  },
};
