/**
 * Case 8: memory. Resident memory of the host process with N idle workers
 * (each has run one call), per worker, toolpool vs raw piscina running the
 * same tool. Each sample is a fresh process; the per-worker figure is the
 * slope between a small and a large pool, so the host's own fixed costs
 * cancel out.
 */
import { runChild } from '../lib/child.ts';
import { median } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'host RSS, no pool',
  'toolpool: RSS per idle worker',
  'raw piscina: RSS per idle worker',
  'toolpool: host RSS with N idle workers',
] as const;

interface MemorySample {
  kind: string;
  workers: number;
  beforeMb: number;
  afterMb: number;
}

export const memory: BenchCase = {
  id: 8,
  title: 'Memory: host RSS with idle workers',
  rowNames: ROWS,
  async run({ quick, log }) {
    const rounds = quick ? 1 : 2;
    const [small, large] = quick ? [1, 2] : [1, 4];
    const samples: Record<string, MemorySample[]> = {};
    const take = async (kind: string, workers: number) => {
      const sample = await runChild<MemorySample>('memory.ts', [kind, String(workers)]);
      (samples[`${kind}:${workers}`] ??= []).push(sample);
    };
    log(`case 8: ${rounds} rounds of fresh processes with ${small} and ${large} workers`);
    const configurations: Array<[string, number]> = [
      ['toolpool', small],
      ['raw', small],
      ['toolpool', large],
      ['raw', large],
    ];
    for (let round = 0; round < rounds; round++) {
      // Each round measures every configuration once; quick mode runs them side by side (RSS does not mind).
      if (quick) await Promise.all(configurations.map(([kind, workers]) => take(kind, workers)));
      else for (const [kind, workers] of configurations) await take(kind, workers);
    }
    const rss = (key: string) => median(samples[key]!.map((s) => s.afterMb));
    const perWorker = (kind: string) => (rss(`${kind}:${large}`) - rss(`${kind}:${small}`)) / (large - small);
    const toolpool = perWorker('toolpool');
    const raw = perWorker('raw');
    return {
      id: 8,
      title: memory.title,
      rows: [
        row(
          ROWS[0],
          'MB',
          median(
            Object.values(samples)
              .flat()
              .map((s) => s.beforeMb),
          ),
          {
            n: Object.values(samples).flat().length,
            note: 'each child before it starts its pool: toolpool, tsx and the bench imported',
          },
        ),
        row(ROWS[1], 'MB', toolpool, {
          vs: { row: ROWS[2], ratio: toolpool / raw },
          note: `(RSS with ${large} workers − with ${small}) / ${large - small}`,
        }),
        row(ROWS[2], 'MB', raw, { note: 'same tool module loaded in each worker' }),
        row(ROWS[3], 'MB', rss(`toolpool:${large}`), { n: samples[`toolpool:${large}`]!.length, note: `N = ${large}` }),
      ],
      targets: [],
      notes: [],
    };
  },
};
