/**
 * Case 7: cold start, `createExecutor` with 3 module tools to the first
 * result, JavaScript tool modules vs the same tools in TypeScript (compiled
 * on the host by esbuild). Each sample is a fresh process; a warm process
 * (a second executor in this one) is shown for comparison.
 */
import { fileURLToPath } from 'node:url';
import { toolpool } from '../lib/toolpool.ts';
import { runChild } from '../lib/child.ts';
import { interleave, ratioOf } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'fresh process, 3 JS modules: createExecutor',
  'fresh process, 3 JS modules: first result',
  'fresh process, 3 TS modules: createExecutor',
  'fresh process, 3 TS modules: first result',
  'warm process, 3 JS modules: first result',
  'warm process, 3 TS modules: first result',
] as const;

interface ColdSample {
  kind: string;
  createMs: number;
  firstResultMs: number;
}

const coldTools = (kind: 'js' | 'ts') =>
  ['echo', 'sum', 'upper'].map((name) =>
    fileURLToPath(new URL(`../tools/cold/${name}.${kind === 'ts' ? 'ts' : 'mjs'}`, import.meta.url)),
  );

async function warmStart(kind: 'js' | 'ts'): Promise<number[]> {
  const { createExecutor } = await toolpool();
  const start = performance.now();
  const executor = await createExecutor({ tools: coldTools(kind), workers: { min: 1, max: 2 } });
  await executor.executeBatch([{ id: 'first', name: 'echo', arguments: { text: 'hi' } }]);
  const ms = performance.now() - start;
  await executor.close();
  return [ms];
}

export const coldStart: BenchCase = {
  id: 7,
  title: 'Cold start: createExecutor with 3 module tools to the first result',
  rowNames: ROWS,
  async run({ quick, log }) {
    const rounds = quick ? 1 : 4;
    const create: Record<'js' | 'ts', number[]> = { js: [], ts: [] };
    const child = (kind: 'js' | 'ts') => async () => {
      const sample = await runChild<ColdSample>('cold-start.ts', [kind]);
      create[kind].push(sample.createMs);
      return [sample.firstResultMs];
    };
    log(`case 7: ${rounds} fresh processes per kind`);
    const fresh = quick
      ? await Promise.all([child('js')(), child('ts')()]).then(([js, ts]) => ({
          js: { samples: js, roundMedians: js },
          ts: { samples: ts, roundMedians: ts },
        }))
      : await interleave({ js: child('js'), ts: child('ts') }, { rounds, warmupRounds: 0 });
    const warm = await interleave(
      { js: () => warmStart('js'), ts: () => warmStart('ts') },
      { rounds: quick ? 1 : 4, warmupRounds: quick ? 0 : 1 },
    );
    const s = {
      jsCreate: summarize(create.js),
      tsCreate: summarize(create.ts),
      js: summarize(fresh.js.samples),
      ts: summarize(fresh.ts.samples),
      warmJs: summarize(warm.js.samples),
      warmTs: summarize(warm.ts.samples),
    };
    const tsVsJs = ratioOf(fresh.ts, fresh.js);
    return {
      id: 7,
      title: coldStart.title,
      rows: [
        row(ROWS[0], 'ms', s.jsCreate.median, {
          n: s.jsCreate.n,
          note: 'toolpool already imported; workers start, tools described',
        }),
        row(ROWS[1], 'ms', s.js.median, { n: s.js.n }),
        row(ROWS[2], 'ms', s.tsCreate.median, { n: s.tsCreate.n, note: 'includes the esbuild compile on the host' }),
        row(ROWS[3], 'ms', s.ts.median, { n: s.ts.n, vs: { row: ROWS[1], ratio: tsVsJs.value, range: tsVsJs.range } }),
        row(ROWS[4], 'ms', s.warmJs.median, {
          n: s.warmJs.n,
          note: 'a new executor in a process that made one before',
        }),
        row(ROWS[5], 'ms', s.warmTs.median, { n: s.warmTs.n }),
      ],
      targets: [],
      notes: [],
    };
  },
};
