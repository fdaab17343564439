import { collectGarbage } from './clock.ts';
import { median } from './stats.ts';

/** One block of measurements of one variant; returns its samples. `warmup` is true in rounds that are dropped. */
export type Block = (round: { index: number; warmup: boolean }) => Promise<number[]> | number[];

export interface VariantSamples {
  /** Every sample of the measured rounds (warm-up rounds dropped). */
  samples: number[];
  /** The median of each measured round, in round order. */
  roundMedians: number[];
}

export interface InterleaveOptions {
  rounds: number;
  /** Leading rounds run but not kept (JIT, worker start, caches). Default 1. */
  warmupRounds?: number;
  /**
   * Force a full GC before each block (default false). Off on purpose: a
   * forced GC leaves the heap in a state that slows the next few hundred
   * calls (p99 of a raw piscina round trip went from ~0.2 to ~1.5 ms), and
   * it slows the variant that allocates more per call most, which skewed
   * the trivial-call ratio from 1.33x to 1.85x in one test.
   */
  gcBetween?: boolean;
}

/**
 * Runs the variants side by side: every round runs one block of each, in
 * alternating order (A B C, then C B A), so drift in the machine (other
 * load, thermal, a neighbour VM) lands on all variants alike. Comparisons
 * then use medians of the same rounds. Garbage one variant leaves is
 * collected on whoever runs next; over many rounds that evens out.
 */
export async function interleave<K extends string>(
  variants: Record<K, Block>,
  options: InterleaveOptions,
): Promise<Record<K, VariantSamples>> {
  const names = Object.keys(variants) as K[];
  const warmup = options.warmupRounds ?? 1;
  const out = Object.fromEntries(names.map((name) => [name, { samples: [], roundMedians: [] }])) as unknown as Record<
    K,
    VariantSamples
  >;
  for (let round = 0; round < warmup + options.rounds; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      if (options.gcBetween === true) collectGarbage();
      const samples = await variants[name]({ index: round, warmup: round < warmup });
      if (round < warmup) continue;
      out[name].samples.push(...samples);
      out[name].roundMedians.push(median(samples));
    }
  }
  return out;
}

export interface Ratio {
  /** median(a) / median(b) over all measured samples. */
  value: number;
  /** Smallest and largest per-round ratio: how much the machine's noise moves it. */
  range: [number, number];
}

export function ratioOf(a: VariantSamples, b: VariantSamples): Ratio {
  const perRound = a.roundMedians.map((value, i) => value / b.roundMedians[i]!);
  return { value: median(a.samples) / median(b.samples), range: [Math.min(...perRound), Math.max(...perRound)] };
}

/** Times `count` sequential awaits of `fn`, one sample (µs) per call; `idleMs` (untimed) before each lets the pool go idle first. */
export async function timeEach(count: number, fn: () => Promise<unknown>, idleMs = 0): Promise<number[]> {
  const samples = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const start = process.hrtime.bigint();
    await fn();
    samples[i] = Number(process.hrtime.bigint() - start) / 1e3;
  }
  return samples;
}
