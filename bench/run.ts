/**
 * `npm run bench` — runs every case of issue 4, prints the table, writes
 * bench/results/latest.json and the results block of BENCHMARKS.md.
 *
 *   npm run bench                    full run (a few minutes)
 *   npm run bench -- --quick         tiny sizes, prints only (what the smoke test runs)
 *   npm run bench -- --only 1,3      some cases (prints only, unless --write)
 *   BENCH_QUICK=1 npm run bench      same as --quick
 *   BENCH_SOURCE=1 npm run bench     measure the TypeScript sources through tsx instead of compiled JS
 */
import { fileURLToPath } from 'node:url';
import { CASES } from './cases/index.ts';
import { machineInfo } from './lib/machine.ts';
import { consoleReport, markdownReport, updateBenchmarksDoc, writeJson } from './lib/report.ts';
import { describeBuild } from './lib/toolpool.ts';
import type { BenchContext, CaseResult } from './lib/types.ts';

const argv = process.argv.slice(2);
const option = (name: string) => {
  const index = argv.indexOf(name);
  return index >= 0 ? (argv[index + 1] ?? '') : undefined;
};
const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const only = option('--only')?.split(',').map(Number);
const write = argv.includes('--write') || (!quick && !only);

const machine = machineInfo();
const context: BenchContext = { quick, log: (line) => console.error(`[bench] ${line}`), shared: new Map() };
context.log(
  `${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; measuring ${describeBuild()}${quick ? '; QUICK sizes' : ''}`,
);
const started = performance.now();
const results: CaseResult[] = [];
for (const benchCase of CASES.filter((c) => !only || only.includes(c.id))) {
  const caseStart = performance.now();
  context.log(`case ${benchCase.id}: ${benchCase.title}`);
  results.push(await benchCase.run(context));
  context.log(`case ${benchCase.id} done in ${((performance.now() - caseStart) / 1000).toFixed(1)} s`);
}
const seconds = (performance.now() - started) / 1000;

console.log(consoleReport(results, machine, seconds));
if (write) {
  writeJson(fileURLToPath(new URL('./results/latest.json', import.meta.url)), {
    machine,
    measured: describeBuild(),
    quick,
    seconds,
    results,
  });
  updateBenchmarksDoc(
    fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url)),
    markdownReport(results, machine, seconds, describeBuild()),
  );
  context.log('wrote bench/results/latest.json and BENCHMARKS.md');
}
