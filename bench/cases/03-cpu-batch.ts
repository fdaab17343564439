/**
 * Case 3: a CPU-heavy batch (4 and 8 calls of the hashing tool, ~250 ms
 * each): wall time in toolpool's workers vs the same tool inline (all on
 * the event loop) vs raw piscina. Target: toolpool gets at least 0.95 of
 * the speed-up that raw piscina gets over inline.
 */
import { cpuBatches } from '../lib/cpu-batch.ts';
import { ratioOf } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase, type Row, type Target } from '../lib/types.ts';

const names = (size: number) => ({
  inline: `batch of ${size}: inline (event loop)`,
  raw: `batch of ${size}: raw piscina`,
  toolpool: `batch of ${size}: toolpool workers`,
});

export const cpuBatch: BenchCase = {
  id: 3,
  title: 'CPU-heavy batch, wall time',
  rowNames: Object.values(names(4)),
  async run(ctx) {
    const { sizes, work, workers } = await cpuBatches(ctx);
    const rows: Row[] = [];
    const targets: Target[] = [];
    for (const { size, wall } of sizes) {
      const n = names(size);
      const s = {
        inline: summarize(wall.inline.samples),
        raw: summarize(wall.raw.samples),
        toolpool: summarize(wall.toolpool.samples),
      };
      const rawSpeedup = s.inline.median / s.raw.median;
      const toolpoolSpeedup = s.inline.median / s.toolpool.median;
      const vsRaw = ratioOf(wall.raw, wall.toolpool); // = toolpool's speed-up / raw's speed-up
      rows.push(
        row(n.inline, 'ms', s.inline.median, { n: s.inline.n, note: `${size} x ${work.args.rounds} sha256 rounds` }),
        row(n.raw, 'ms', s.raw.median, {
          n: s.raw.n,
          note: `speed-up over inline ${rawSpeedup.toFixed(2)}x (${workers} workers)`,
        }),
        row(n.toolpool, 'ms', s.toolpool.median, {
          n: s.toolpool.n,
          vs: { row: n.raw, ratio: 1 / vsRaw.value, range: [1 / vsRaw.range[1], 1 / vsRaw.range[0]] },
          note: `speed-up over inline ${toolpoolSpeedup.toFixed(2)}x`,
        }),
      );
      if (size === 4) {
        targets.push({
          name: 'CPU-heavy batch of 4: speed-up over inline vs raw piscina’s',
          measured: vsRaw.value,
          shown: `${vsRaw.value.toFixed(2)} (${toolpoolSpeedup.toFixed(2)}x vs ${rawSpeedup.toFixed(2)}x)`,
          goal: '>= 0.95',
          met: vsRaw.value >= 0.95,
        });
      }
    }
    return { id: 3, title: cpuBatch.title, rows, targets, notes: [] };
  },
};
