/**
 * Case 4: main-thread responsiveness during case 3's batches: event-loop
 * delay p99 and max (monitorEventLoopDelay, 1 ms resolution) while the
 * batch runs, toolpool vs inline vs raw piscina, against an idle loop
 * measured in the same rounds over a span as long as toolpool's batch.
 */
import { cpuBatches, type CpuVariant } from '../lib/cpu-batch.ts';
import { median } from '../lib/stats.ts';
import { row, type BenchCase, type Row, type Target } from '../lib/types.ts';

const LABELS: Partial<Record<CpuVariant, string>> = {
  idle: 'idle loop',
  toolpool: 'toolpool workers',
  raw: 'raw piscina',
  inline: 'inline (event loop)',
};
const rowName = (size: number, variant: CpuVariant, stat: 'p99' | 'max') =>
  `batch of ${size}: ${LABELS[variant]}, delay ${stat}`;

export const responsiveness: BenchCase = {
  id: 4,
  title: 'Event-loop delay during the CPU-heavy batch',
  rowNames: (['idle', 'toolpool', 'inline'] as const).flatMap((v) => [rowName(4, v, 'p99'), rowName(4, v, 'max')]),
  async run(ctx) {
    const { sizes } = await cpuBatches(ctx);
    const rows: Row[] = [];
    const targets: Target[] = [];
    for (const { size, delay } of sizes) {
      const p99 = (variant: CpuVariant) => median(delay[variant].map((d) => d.p99Ms));
      const max = (variant: CpuVariant) => Math.max(...delay[variant].map((d) => d.maxMs));
      for (const variant of ['idle', 'toolpool', 'raw', 'inline'] as const) {
        rows.push(
          row(rowName(size, variant, 'p99'), 'ms', p99(variant), {
            n: delay[variant].length,
            note:
              variant === 'idle'
                ? 'median over rounds of each batch’s p99'
                : `${(p99(variant) - p99('idle')).toFixed(1)} ms over idle`,
          }),
          row(rowName(size, variant, 'max'), 'ms', max(variant), {
            n: delay[variant].length,
            note: 'largest over rounds',
          }),
        );
      }
      if (size === 4) {
        const over = p99('toolpool') - p99('idle');
        targets.push({
          name: 'Event-loop delay p99 during batch of 4, over idle',
          measured: over,
          shown: `${over >= 0 ? '+' : ''}${over.toFixed(2)} ms (${p99('toolpool').toFixed(2)} vs ${p99('idle').toFixed(2)})`,
          goal: '<= +5 ms',
          met: over <= 5,
        });
      }
    }
    return { id: 4, title: responsiveness.title, rows, targets, notes: [] };
  },
};
