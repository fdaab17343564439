/** Small, dependency-free statistics for benchmark samples. */

export function sortedCopy(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Linear-interpolated quantile (q in 0..1) of already sorted values. */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (position - lower);
}

export function median(values: readonly number[]): number {
  return quantileSorted(sortedCopy(values), 0.5);
}

export function p99(values: readonly number[]): number {
  return quantileSorted(sortedCopy(values), 0.99);
}

export interface Summary {
  median: number;
  p99: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = sortedCopy(values);
  return {
    median: quantileSorted(sorted, 0.5),
    p99: quantileSorted(sorted, 0.99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    n: sorted.length,
  };
}
