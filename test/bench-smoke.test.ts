import { afterAll, describe, expect, test } from 'vitest';
import { CASES } from '../bench/cases/index.ts';
import { machineInfo } from '../bench/lib/machine.ts';
import { consoleReport, markdownReport } from '../bench/lib/report.ts';
import { removeBuild } from '../bench/lib/toolpool.ts';
import type { BenchContext, CaseResult } from '../bench/lib/types.ts';

/**
 * The benchmark suite must not rot: every case runs once with tiny sizes
 * (`quick`) and must produce its named rows with finite numbers. No timing
 * is asserted; the numbers of a quick run mean nothing.
 */
const context: BenchContext = { quick: true, log: () => undefined, shared: new Map() };
const results: CaseResult[] = [];
afterAll(removeBuild);

describe('bench smoke: each case of bench/ runs with tiny sizes', () => {
  test.each(CASES.map((benchCase) => [benchCase.id, benchCase.title, benchCase] as const))(
    'case %i: %s',
    async (_id, _title, benchCase) => {
      const result = await benchCase.run(context);
      results.push(result);
      expect(result.id).toBe(benchCase.id);
      expect(result.rows.map((row) => row.name)).toEqual(expect.arrayContaining([...benchCase.rowNames]));
      for (const row of result.rows) {
        expect(Number.isFinite(row.median), `${row.name}: median ${row.median}`).toBe(true);
        if (row.p99 !== undefined) expect(Number.isFinite(row.p99), `${row.name}: p99 ${row.p99}`).toBe(true);
        if (row.vs) expect(Number.isFinite(row.vs.ratio), `${row.name}: ratio ${row.vs.ratio}`).toBe(true);
      }
      for (const target of result.targets) expect(Number.isFinite(target.measured), `${target.name}: ${target.measured}`).toBe(true);
    },
    60_000,
  );

  test('the report renders every row and target', () => {
    const machine = machineInfo();
    const text = consoleReport(results, machine, 1);
    const doc = markdownReport(results, machine, 1);
    for (const result of results) {
      for (const row of result.rows) {
        expect(text).toContain(row.name);
        expect(doc).toContain(row.name);
      }
    }
    expect(doc).toContain(machine.cpu);
    expect(doc).toContain(machine.node);
  });
});
