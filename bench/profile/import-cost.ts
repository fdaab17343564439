/**
 * What loading toolpool costs (not part of `npm run bench`): CPU time of
 * `import('toolpool')` and of a `createExecutor` with one worker-tier tool,
 * each in a fresh `node` process (no tsx), as medians over several. Main
 * thread: /proc/self/task/<pid>/schedstat (ns of run time, immune to how
 * long the thread waited for a core); whole process: process.cpuUsage()
 * (all threads, the tool's worker included).
 *
 *   node --import tsx bench/profile/import-cost.ts [runs=9] [other-tree]
 *
 * With `other-tree` (a folder holding another version's src/, e.g. from
 * `git archive <commit> src | tar -x -C <folder>`) both are measured, their
 * runs alternating, and printed side by side.
 */
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { summarize } from '../lib/stats.ts';
import { compileSourceTree } from '../lib/toolpool.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const runs = Number(process.argv[2] ?? 9);
const other = process.argv[3] ? resolve(process.argv[3]) : undefined;
const tool = join(ROOT, 'bench/tools/noop.ts');

/** Compiles `<tree>/src` as the benchmarks measure it, under bench/.build, so node_modules resolves. */
async function compile(tree: string, label: string): Promise<string> {
  const out = join(ROOT, 'bench/.build', `import-cost-${label}-${process.pid}`);
  await rm(out, { recursive: true, force: true });
  await compileSourceTree(tree, out);
  const probe = join(out, 'probe.mjs');
  await writeFile(
    probe,
    `import { readFileSync } from 'node:fs';
const mainNs = () => Number(readFileSync('/proc/self/task/' + process.pid + '/schedstat', 'utf8').split(' ')[0]);
const t0 = mainNs();
const c0 = process.cpuUsage();
const { createExecutor } = await import(${JSON.stringify(pathToFileURL(join(out, 'src/index.js')).href)});
const t1 = mainNs();
const executor = await createExecutor({ tools: [${JSON.stringify(tool)}] });
const t2 = mainNs();
const c = process.cpuUsage(c0);
await executor.close();
console.log(JSON.stringify({ importMs: (t1 - t0) / 1e6, createMs: (t2 - t1) / 1e6, mainMs: (t2 - t0) / 1e6, processMs: (c.user + c.system) / 1000 }));
`,
  );
  return probe;
}

type Sample = { importMs: number; createMs: number; mainMs: number; processMs: number };
const trees: Record<string, string> = { current: await compile(ROOT, 'current') };
if (other) trees.other = await compile(other, 'other');
const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(trees).map((name) => [name, []]));
try {
  // One discarded run each: the compile cache and the page cache are warm for every measured one.
  for (let round = -1; round < runs; round++) {
    for (const [name, probe] of Object.entries(trees)) {
      const sample = JSON.parse(execFileSync(process.execPath, [probe], { encoding: 'utf8' })) as Sample;
      if (round >= 0) samples[name]!.push(sample);
    }
  }
} finally {
  for (const name of Object.keys(trees))
    await rm(join(ROOT, 'bench/.build', `import-cost-${name}-${process.pid}`), { recursive: true, force: true });
}
const median = (values: number[]) => summarize(values).median.toFixed(1);
for (const [name, list] of Object.entries(samples)) {
  console.log(
    `${name.padEnd(8)} median of ${list.length} fresh processes: main thread CPU import ${median(list.map((s) => s.importMs))} ms` +
      ` + createExecutor ${median(list.map((s) => s.createMs))} ms = ${median(list.map((s) => s.mainMs))} ms;` +
      ` whole process CPU ${median(list.map((s) => s.processMs))} ms` +
      ` (main-thread totals ${list
        .map((s) => s.mainMs)
        .sort((a, b) => a - b)
        .map((ms) => ms.toFixed(0))
        .join(' ')})`,
  );
}
