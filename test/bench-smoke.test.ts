import { afterAll, describe, expect, test } from 'vitest';
import { CASES } from '../bench/cases/index.ts';
import { machineInfo } from '../bench/lib/machine.ts';
import { newPiRuns, piPeer } from '../bench/lib/pi.ts';
import { consoleReport, markdownReport } from '../bench/lib/report.ts';
import { removeBuild } from '../bench/lib/toolpool.ts';
import type { BenchContext, CaseResult } from '../bench/lib/types.ts';
import { lineIndependentChecksRunHere } from './support/ci-lines.ts';

/**
 * The benchmark suite must not rot: every case runs once with tiny sizes
 * (`quick`) and must produce its named rows with finite numbers. No timing
 * is asserted; the numbers of a quick run mean nothing.
 */
const context: BenchContext = { quick: true, log: () => undefined, shared: new Map() };
const results: CaseResult[] = [];
afterAll(removeBuild);

// The harness runs the same on every line: CI runs it on one (support/ci-lines.ts); the peer check below on each.
describe.skipIf(!lineIndependentChecksRunHere)('bench smoke: each case of bench/ runs with tiny sizes', () => {
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
      for (const target of result.targets)
        expect(Number.isFinite(target.measured), `${target.name}: ${target.measured}`).toBe(true);
    },
    // Several cases start processes (worker machines, Redis, toolpool serve): with a CPU burner case 16 took over 60 s.
    180_000,
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

describe('bench: the pi-agent-core peer follows the Node line', () => {
  test.each([
    ['20.20.2', false],
    ['22.18.0', false],
    ['22.19.0', true],
    ['24.1.0', true],
    ['26.0.0', true],
  ])('Node %s runs @earendil-works/pi-agent-core 1.x: %s', (version, runs) => {
    expect(newPiRuns(version)).toBe(runs);
  });

  test('the peer loaded here is the one for this line, and its loop runs a tool batch', async () => {
    const peer = await piPeer();
    expect(peer.name).toMatch(
      newPiRuns() ? /^@earendil-works\/pi-agent-core 1\.\d+\.\d+$/ : /^@mariozechner\/pi-agent-core 0\.73\.\d+$/,
    );
    const { results } = await peer.harness(['noop']).batch([{ id: 'a', name: 'noop', arguments: { n: 7 } }]);
    expect(results).toEqual([expect.objectContaining({ isError: false, content: [{ type: 'text', text: '7' }] })]);
  });
});
