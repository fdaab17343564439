/**
 * Case 1: per-call overhead of one trivial tool, one call at a time:
 * toolpool worker tool vs toolpool inline tool vs a bare function call vs
 * a raw piscina round trip with the same worker count (one).
 */
import { toolpool } from '../lib/toolpool.ts';
import noop from '../tools/noop.ts';
import { directContext } from '../lib/hash-work.ts';
import { RawPool, TOOLS, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = ['bare function call', 'toolpool inline call', 'raw piscina round trip', 'toolpool worker call'] as const;

export const callOverhead: BenchCase = {
  id: 1,
  title: 'Per-call overhead, one trivial call at a time',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 20;
    const perBlock = quick ? 20 : 400;
    const worker = await createExecutor({ tools: [TOOLS.noop], workers: { min: 1, max: 1 } });
    const inline = await createExecutor({ tools: [noop] });
    const raw = new RawPool(1);
    try {
      const module = await raw.module(TOOLS.noop);
      const call = [toolCall('c1', 'noop', { n: 1 })];
      const args = { n: 1 };
      log(`case 1: ${rounds} rounds x ${perBlock} calls per variant`);
      const result = await interleave(
        {
          bare: () => {
            // One sample = the mean of 1000 calls (a single call is below the clock's resolution).
            // The results are kept, so the JIT cannot drop the calls.
            const samples: number[] = [];
            const kept: unknown[] = new Array(1000);
            for (let s = 0; s < perBlock / 10; s++) {
              const start = process.hrtime.bigint();
              for (let i = 0; i < 1000; i++) kept[i] = noop.execute(args, directContext);
              samples.push(Number(process.hrtime.bigint() - start) / 1e3 / 1000);
            }
            if (kept.length !== 1000) throw new Error('unreachable');
            return samples;
          },
          inline: () => timeEach(perBlock, () => inline.executeBatch(call)),
          raw: () => timeEach(perBlock, () => raw.run(module, args)),
          worker: () => timeEach(perBlock, () => worker.executeBatch(call)),
        },
        { rounds, warmupRounds: 1 },
      );
      const ratio = ratioOf(result.worker, result.raw);
      const s = {
        bare: summarize(result.bare.samples),
        inline: summarize(result.inline.samples),
        raw: summarize(result.raw.samples),
        worker: summarize(result.worker.samples),
      };
      return {
        id: 1,
        title: callOverhead.title,
        rows: [
          row(ROWS[0], 'µs', s.bare.median, { p99: s.bare.p99, n: s.bare.n, note: 'noop.execute() directly; sample = mean of 1000 calls' }),
          row(ROWS[1], 'µs', s.inline.median, { p99: s.inline.p99, n: s.inline.n, note: 'executeBatch, tool on the main thread' }),
          row(ROWS[2], 'µs', s.raw.median, { p99: s.raw.p99, n: s.raw.n, note: 'piscina.run() of the same execute, 1 worker' }),
          row(ROWS[3], 'µs', s.worker.median, {
            p99: s.worker.p99,
            n: s.worker.n,
            vs: { row: ROWS[2], ratio: ratio.value, range: ratio.range },
            note: 'executeBatch, 1 worker, no listeners',
          }),
        ],
        targets: [
          {
            name: 'Trivial worker call vs raw piscina round trip',
            measured: ratio.value,
            shown: `${ratio.value.toFixed(2)}x`,
            goal: '<= 1.20x',
            met: ratio.value <= 1.2,
          },
        ],
        notes: [],
      };
    } finally {
      await Promise.all([worker.close(), inline.close(), raw.close()]);
    }
  },
};
