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
 * - `toolpool serve --tools tools` driven by the official SDK client over
 *   stdio (as Claude Desktop or Cursor start it): launch to the first
 *   tools/list answer and to the first result (one call of `sum`); with the
 *   caches it keeps (compiled modules, listings) and with an empty one;
 *   against a bare SDK `McpServer` with the same three tools
 *   (bench/raw/bare-mcp-server.mjs), alternating.
 *
 * "ready" is from the app's first line to the first results (imports
 * included); "whole process" is spawn to exit, seen by this process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
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
  'bare SDK McpServer, 3 tools: first tools/list',
  'bare SDK McpServer, 3 tools: first result',
  'toolpool serve: first tools/list',
  'toolpool serve: first result',
  'toolpool serve, empty cache: first tools/list',
  'toolpool serve, empty cache: first result',
] as const;

const BARE_SERVER = fileURLToPath(new URL('../raw/bare-mcp-server.mjs', import.meta.url));

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

interface ServeRun {
  listedMs: number;
  resultMs: number;
}

/**
 * An MCP server from launch (the SDK client spawns it) to its answer to the
 * first tools/list, and to the result of a first call of `sum`.
 */
async function firstListAndResult(root: string, args: string[], emptyCache: boolean): Promise<ServeRun> {
  const cache = emptyCache ? mkdtempSync(join(tmpdir(), 'toolpool-bench-cache-')) : undefined;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: root,
    // An empty cache is a first start: no compiled modules or listings (TMPDIR) and no V8 code cache (XDG_CACHE_HOME).
    env: { PATH: process.env.PATH ?? '', ...(cache ? { TMPDIR: cache, XDG_CACHE_HOME: cache } : {}) },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'bench', version: '1' });
  const started = performance.now();
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    const listedMs = performance.now() - started;
    const result = (await client.callTool({ name: 'sum', arguments: { a: 1, b: 2 } })) as {
      content: Array<{ text?: string }>;
    };
    const resultMs = performance.now() - started;
    if (tools.length !== 3 || result.content[0]?.text !== '3')
      throw new Error(`case 18: ${args.join(' ')} listed ${tools.length} tools, answered ${JSON.stringify(result)}`);
    return { listedMs, resultMs };
  } catch (error) {
    throw new Error(`case 18: ${args.join(' ')} failed: ${(error as Error).message}; stderr: ${stderr}`);
  } finally {
    await client.close();
    if (cache) rmSync(cache, { recursive: true, force: true });
  }
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
    log(`case 18: ${rounds} rounds of fresh processes (8 per round)`);
    const runs: Partial<Record<Variant, AppRun[]>> = {};
    const served: Record<string, ServeRun[]> = {};
    const server = (script: string, args: string[], emptyCache: boolean) => async () => {
      const run = await firstListAndResult(project.root, [script, ...args], emptyCache);
      (served[`${script}:${emptyCache}`] ??= []).push(run);
      return [run.listedMs];
    };
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
        bare: server(BARE_SERVER, [], false),
        serve: server(serveScript, ['serve', '--tools', 'tools'], false),
        'serve-empty-cache': server(serveScript, ['serve', '--tools', 'tools'], true),
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
    // The results of the served variants, as samples of their own (the interleave kept the list's).
    const resultOf = (script: string, emptyCache: boolean): VariantSamples => {
      const samples = served[`${script}:${emptyCache}`]!.slice(-rounds).map((run) => run.resultMs);
      return { samples, roundMedians: samples };
    };
    const bareResult = resultOf(BARE_SERVER, false);
    const serveResult = resultOf(serveScript, false);
    const emptyResult = resultOf(serveScript, true);
    const serveList = ratioOf(result.serve, result.bare);
    const serveFirst = ratioOf(serveResult, bareResult);
    const emptyList = ratioOf(result['serve-empty-cache'], result.bare);
    const emptyFirst = ratioOf(emptyResult, bareResult);
    const n = rounds;
    const targets: Target[] = [
      {
        name: 'Fresh process ready vs raw piscina with the same tools',
        measured: ready.value,
        shown: `${ready.value.toFixed(2)}x`,
        goal: '<= 2.00x',
        met: ready.value <= 2,
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
      ...(
        [
          ['toolpool serve: first tools/list vs a bare SDK server', serveList, 1.5],
          ['toolpool serve: first result vs a bare SDK server', serveFirst, 1.5],
          ['toolpool serve, empty cache: first tools/list vs a bare SDK server', emptyList, 2.5],
          ['toolpool serve, empty cache: first result vs a bare SDK server', emptyFirst, 2.5],
        ] as const
      ).map(([name, ratio, goal]) => ({
        name,
        measured: ratio.value,
        shown: `${ratio.value.toFixed(2)}x`,
        goal: `<= ${goal.toFixed(2)}x`,
        met: ratio.value <= goal,
      })),
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
        row(ROWS[8], 'ms', median(result.bare.samples), {
          n,
          note: 'the official SDK client over stdio, from spawn; zod schemas, registerTool',
        }),
        row(ROWS[9], 'ms', median(bareResult.samples), { n, note: 'one call of sum after the list' }),
        row(ROWS[10], 'ms', median(result.serve.samples), {
          n,
          vs: { row: ROWS[8], ratio: serveList.value, range: serveList.range },
          note: 'listed from the listing cache; the workers start meanwhile',
        }),
        row(ROWS[11], 'ms', median(serveResult.samples), {
          n,
          vs: { row: ROWS[9], ratio: serveFirst.value, range: serveFirst.range },
          note: "waits for its own module's worker",
        }),
        row(ROWS[12], 'ms', median(result['serve-empty-cache'].samples), {
          n,
          vs: { row: ROWS[8], ratio: emptyList.value, range: emptyList.range },
          note: 'TMPDIR and XDG_CACHE_HOME a new empty folder: esbuild compiles, the workers describe before the list, no V8 code cache',
        }),
        row(ROWS[13], 'ms', median(emptyResult.samples), {
          n,
          vs: { row: ROWS[9], ratio: emptyFirst.value, range: emptyFirst.range },
        }),
      ],
      targets,
      notes: [],
    };
  },
};
