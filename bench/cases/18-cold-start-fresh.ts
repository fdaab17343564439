/**
 * Case 18: cold start as a user meets it (issue 19). Every sample is a fresh
 * `node` process (no tsx) in a project whose three TypeScript tool modules
 * import `toolpool` by name:
 *
 * - raw piscina, 2 threads, trivial worker, until both threads answered;
 * - raw piscina, 2 threads, each importing the same three tools (as JS);
 * - toolpool, the three modules (a trust domain each, so three workers),
 *   one call of each tool; the same with the three in one `trustDomain`
 *   (two workers, like raw piscina); the same with an empty compile cache;
 * - `toolpool serve --tools tools` until it answers its first tools/list.
 *
 * "ready" is from the app's first line to the first results (imports
 * included); "whole process" is spawn to exit, seen by this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeColdProject, type ColdProject } from '../lib/cold-project.ts';
import { interleave, ratioOf, type VariantSamples } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { childEnvironment, fromSource } from '../lib/toolpool.ts';
import { row, type BenchCase, type Target } from '../lib/types.ts';

const ROWS = [
  'raw piscina, 2 trivial threads: ready',
  'raw piscina, 2 threads with the 3 tools: ready',
  'toolpool, 3 modules (a domain each): ready',
  'toolpool, 3 modules in one trustDomain (2 workers): ready',
  'toolpool, 3 modules, empty compile cache: ready',
  'raw piscina, 2 threads with the 3 tools: whole process',
  'toolpool, 3 modules (a domain each): whole process',
  'toolpool, 3 modules: close()',
  'toolpool serve: launch to first tools/list answer',
] as const;

type Variant = 'raw-trivial' | 'raw-tools' | 'toolpool' | 'toolpool-shared' | 'toolpool-empty-cache';

interface AppRun {
  readyMs: number;
  closeMs: number;
  wallMs: number;
}

function runApp(project: ColdProject, variant: Variant): Promise<AppRun> {
  const emptyCache =
    variant === 'toolpool-empty-cache' ? mkdtempSync(join(tmpdir(), 'toolpool-bench-cache-')) : undefined;
  const env = { PATH: process.env.PATH, ...(emptyCache ? { TMPDIR: emptyCache } : {}) };
  const argument = JSON.stringify({
    variant: emptyCache ? 'toolpool' : variant,
    tsTools: project.tsTools,
    jsTools: project.jsTools,
  });
  const started = performance.now();
  return new Promise<AppRun>((resolve, reject) => {
    const child = spawn(process.execPath, [project.app, argument], {
      cwd: project.root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`case 18: ${variant} exited ${code}: ${stderr}`));
      const { readyMs, closeMs } = JSON.parse(stdout.trim().split('\n').pop()!) as AppRun;
      resolve({ readyMs, closeMs, wallMs });
    });
  }).finally(() => emptyCache && rmSync(emptyCache, { recursive: true, force: true }));
}

/** `toolpool serve` from launch until its answer to the first tools/list (the requests are written at once). */
function serveFirstList(project: ColdProject, serveScript: string): Promise<number> {
  const requests = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [serveScript, 'serve', '--tools', 'tools'], {
      cwd: project.root,
      env: { PATH: process.env.PATH },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let buffered = '';
    let stderr = '';
    let listedAt: number | undefined;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n').slice(0, -1)) {
        const message = JSON.parse(line) as { id?: number; result?: { tools?: unknown[] } };
        if (message.id === 2 && listedAt === undefined) {
          listedAt = performance.now() - started;
          if (message.result?.tools?.length !== 3)
            reject(new Error(`case 18: serve listed ${JSON.stringify(message)}`));
          child.stdin.end();
        }
      }
      buffered = buffered.slice(buffered.lastIndexOf('\n') + 1);
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      listedAt !== undefined
        ? resolve(listedAt)
        : reject(new Error(`case 18: serve exited ${code} before tools/list: ${stderr}`)),
    );
    child.stdin.write(`${requests.map((request) => JSON.stringify(request)).join('\n')}\n`);
  });
}

const median = (samples: number[]) => summarize(samples).median;

export const coldStartFresh: BenchCase = {
  id: 18,
  title: 'Cold start in a fresh process, tools importing toolpool by name, vs raw piscina',
  rowNames: ROWS,
  async run({ quick, log }) {
    if (fromSource)
      throw new Error(
        'case 18 measures the compiled build (plain node cannot import the TypeScript sources): run it without BENCH_SOURCE=1',
      );
    const build = (await childEnvironment()).BENCH_TOOLPOOL_BUILD!;
    const project = await writeColdProject(build);
    const serveScript = join(project.root, 'serve.mjs');
    await writeFile(
      serveScript,
      `const { main } = await import(${JSON.stringify(pathToFileURL(join(build, 'src/cli/main.js')).href)});\nprocess.exitCode = await main(process.argv.slice(2));\n`,
    );
    const rounds = quick ? 1 : 8;
    log(`case 18: ${rounds} rounds of fresh processes (6 per round)`);
    const runs: Partial<Record<Variant, AppRun[]>> = {};
    const app = (variant: Variant) => async () => {
      const run = await runApp(project, variant);
      (runs[variant] ??= []).push(run);
      return [run.readyMs];
    };
    const result = await interleave(
      {
        'raw-trivial': app('raw-trivial'),
        'raw-tools': app('raw-tools'),
        toolpool: app('toolpool'),
        'toolpool-shared': app('toolpool-shared'),
        'toolpool-empty-cache': app('toolpool-empty-cache'),
        serve: async () => [await serveFirstList(project, serveScript)],
      },
      { rounds, warmupRounds: quick ? 0 : 1 },
    );
    // The warm-up round's runs were recorded too: keep the measured rounds' only (the last `rounds` of each).
    const measured = (variant: Variant) => runs[variant]!.slice(-rounds);
    const wall = (variant: Variant): VariantSamples => {
      const samples = measured(variant).map((run) => run.wallMs);
      return { samples, roundMedians: samples };
    };
    const ready = ratioOf(result.toolpool, result['raw-tools']);
    const readyShared = ratioOf(result['toolpool-shared'], result['raw-tools']);
    const readyTrivial = ratioOf(result.toolpool, result['raw-trivial']);
    const whole = ratioOf(wall('toolpool'), wall('raw-tools'));
    const close = median(measured('toolpool').map((run) => run.closeMs));
    const emptyCache = median(result['toolpool-empty-cache'].samples);
    const serve = median(result.serve.samples);
    const n = rounds;
    const targets: Target[] = [
      {
        name: 'Fresh process ready vs raw piscina with the same tools',
        measured: ready.value,
        shown: `${ready.value.toFixed(2)}x`,
        goal: '<= 3.00x',
        met: ready.value <= 3,
      },
      {
        name: 'Whole fresh process vs raw piscina with the same tools',
        measured: whole.value,
        shown: `${whole.value.toFixed(2)}x`,
        goal: '<= 1.50x',
        met: whole.value <= 1.5,
      },
      {
        name: 'close() of a fresh executor',
        measured: close,
        shown: `${close.toFixed(0)} ms`,
        goal: '<= 100 ms',
        met: close <= 100,
      },
      {
        name: 'Ready with an empty compile cache',
        measured: emptyCache,
        shown: `${emptyCache.toFixed(0)} ms`,
        goal: '<= 1000 ms',
        met: emptyCache <= 1000,
      },
      {
        name: 'toolpool serve to its first tools/list',
        measured: serve,
        shown: `${serve.toFixed(0)} ms`,
        goal: '<= 500 ms',
        met: serve <= 500,
      },
    ];
    return {
      id: 18,
      title: coldStartFresh.title,
      rows: [
        row(ROWS[0], 'ms', median(result['raw-trivial'].samples), {
          n,
          note: 'import piscina, 2 threads, a result from each',
        }),
        row(ROWS[1], 'ms', median(result['raw-tools'].samples), {
          n,
          note: 'each thread imports the 3 JS tools (TypeBox, defineTool)',
        }),
        row(ROWS[2], 'ms', median(result.toolpool.samples), {
          n,
          vs: { row: ROWS[1], ratio: ready.value, range: ready.range },
          note: `import toolpool, createExecutor, one call per tool; ${readyTrivial.value.toFixed(2)}x the trivial pool`,
        }),
        row(ROWS[3], 'ms', median(result['toolpool-shared'].samples), {
          n,
          vs: { row: ROWS[1], ratio: readyShared.value, range: readyShared.range },
        }),
        row(ROWS[4], 'ms', emptyCache, {
          n,
          note: 'TMPDIR a new empty folder: esbuild compiles the 3 modules and the runtime cache is made',
        }),
        row(ROWS[5], 'ms', median(wall('raw-tools').samples), { n, note: 'spawn to exit' }),
        row(ROWS[6], 'ms', median(wall('toolpool').samples), {
          n,
          vs: { row: ROWS[5], ratio: whole.value, range: whole.range },
        }),
        row(ROWS[7], 'ms', close, { n }),
        row(ROWS[8], 'ms', serve, { n, note: 'initialize, initialized and tools/list written at launch' }),
      ],
      targets,
      notes: [],
    };
  },
};
