/**
 * Case 2: throughput with 100 calls in flight: one 100-call batch of the
 * trivial worker tool vs 100 concurrent raw piscina tasks, same two workers.
 */
import { toolpool } from '../lib/toolpool.ts';
import { CORES, RawPool, TOOLS, calls } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = ['raw piscina, 100 tasks in flight', 'toolpool, 100-call batch'] as const;

export const throughput: BenchCase = {
  id: 2,
  title: 'Throughput, 100 trivial calls in flight',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 15;
    const batchesPerBlock = quick ? 1 : 6;
    const size = quick ? 10 : 100;
    const executor = await createExecutor({ tools: [TOOLS.noop], workers: { min: CORES, max: CORES } });
    const raw = new RawPool(CORES);
    try {
      const module = await raw.module(TOOLS.noop);
      const batch = calls(size, 'noop', { n: 1 });
      const args = { n: 1 };
      /** One sample per batch: calls per second. */
      const measure = async (runBatch: () => Promise<unknown>) =>
        (await timeEach(batchesPerBlock, runBatch)).map((us) => size / (us / 1e6));
      log(`case 2: ${rounds} rounds x ${batchesPerBlock} batches of ${size}, ${CORES} workers`);
      const result = await interleave(
        {
          raw: () => measure(() => Promise.all(batch.map(() => raw.run(module, args)))),
          toolpool: () => measure(() => executor.executeBatch(batch)),
        },
        { rounds, warmupRounds: 1 },
      );
      const ratio = ratioOf(result.toolpool, result.raw);
      const s = { raw: summarize(result.raw.samples), toolpool: summarize(result.toolpool.samples) };
      return {
        id: 2,
        title: throughput.title,
        rows: [
          row(ROWS[0], 'calls/s', s.raw.median, { n: s.raw.n, note: `${CORES} workers, Promise.all of piscina.run()` }),
          row(ROWS[1], 'calls/s', s.toolpool.median, {
            n: s.toolpool.n,
            vs: { row: ROWS[0], ratio: ratio.value, range: ratio.range },
            note: `${CORES} workers, one executeBatch, no listeners`,
          }),
        ],
        targets: [
          {
            name: 'Throughput vs raw piscina (100 in flight)',
            measured: ratio.value,
            shown: `${ratio.value.toFixed(2)}x`,
            goal: '>= 1.00x',
            met: ratio.value >= 1.0,
          },
        ],
        notes: [],
      };
    } finally {
      await Promise.all([executor.close(), raw.close()]);
    }
  },
};
