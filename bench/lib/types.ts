/** One line of the results table. */
export interface Row {
  /** Unique within its case; the smoke test checks these names. */
  name: string;
  unit: string;
  median: number;
  p99?: number;
  /** This row's median over another row's median, from the same interleaved rounds. */
  vs?: { row: string; ratio: number; range?: [number, number] };
  /** How many samples the median is over. */
  n?: number;
  note?: string;
}

/** A target of issue 4, judged on a ratio (or difference) from the same run. */
export interface Target {
  name: string;
  measured: number;
  /** How `measured` reads, e.g. "1.18x raw piscina" or "+0.7 ms over idle". */
  shown: string;
  goal: string;
  met: boolean;
}

export interface CaseResult {
  id: number;
  title: string;
  rows: Row[];
  targets: Target[];
  notes: string[];
}

export interface BenchContext {
  quick: boolean;
  log: (line: string) => void;
  /** Measurements shared by several cases (cases 3, 4 and 10 read the same CPU-heavy rounds). */
  shared: Map<string, Promise<unknown>>;
}

export interface BenchCase {
  id: number;
  title: string;
  /** The rows every run of this case produces. */
  rowNames: readonly string[];
  run(ctx: BenchContext): Promise<CaseResult>;
}

/** Memoizes a measurement in the run's context, so cases that share it run it once. */
export function shared<T>(ctx: BenchContext, key: string, measure: () => Promise<T>): Promise<T> {
  let value = ctx.shared.get(key) as Promise<T> | undefined;
  if (!value) {
    value = measure();
    ctx.shared.set(key, value);
  }
  return value;
}

export function row(
  name: string,
  unit: string,
  median: number,
  extra: Omit<Row, 'name' | 'unit' | 'median'> = {},
): Row {
  return { name, unit, median, ...extra };
}
