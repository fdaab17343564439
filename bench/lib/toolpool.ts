/**
 * Which toolpool the benchmarks measure: the JavaScript a user of the
 * package runs, not the TypeScript sources through tsx.
 *
 * Why: tsx compiles with esbuild's `keepNames`, which wraps every function
 * expression in a `__name(fn, "name")` call (an Object.defineProperty) each
 * time it is evaluated. toolpool's host code makes a few closures per call,
 * so from source an inline call measured ~45% slower than the same code
 * compiled plainly, while pi-agent-core (shipped as JavaScript) pays
 * nothing. So `src/` is compiled here, file by file with
 * esbuild (no bundling, no keepNames, the same target as the package
 * build), into bench/.build/, fresh on every run, and imported from there;
 * the runtime entries are then bundled as `npm run build` bundles them.
 * `BENCH_SOURCE=1` measures the sources through tsx instead;
 * `BENCH_UNBUNDLED=1` leaves the runtime entries file by file (as the
 * package was before they were bundled), to measure what bundling them buys.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleRuntimeEntries } from '../../scripts/bundle-runtime.mjs';

type Toolpool = typeof import('../../src/index.ts');
type Validation = typeof import('../../src/tools/validation.ts');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_ROOT = join(ROOT, 'bench/.build');
/** One directory per process, so a bench run and a test run never rebuild under each other. */
const OUT = join(BUILD_ROOT, String(process.pid));
/** Set for child processes (cases 7 and 8): the parent's build, imported as is. */
const PARENT_BUILD = process.env.BENCH_TOOLPOOL_BUILD;

export const fromSource = process.env.BENCH_SOURCE === '1';
const unbundled = process.env.BENCH_UNBUNDLED === '1';

let built: Promise<string> | undefined;

/** Compiles src/ to bench/.build/ (once per process); returns the output root. */
function buildOnce(): Promise<string> {
  if (PARENT_BUILD) return Promise.resolve(PARENT_BUILD);
  built ??= (async () => {
    await removeStaleBuilds();
    await rm(OUT, { recursive: true, force: true });
    process.once('exit', removeBuild);
    await compileSourceTree(ROOT, OUT);
    // Not a source tree: keep it out of git without touching the repository's .gitignore.
    await writeFile(join(BUILD_ROOT, '.gitignore'), '*\n');
    return OUT;
  })();
  return built;
}

/**
 * Compiles `<tree>/src` file by file (no bundling, no keepNames, the package build's target) into `out`, keeping
 * the layout, with relative imports of `.ts` sources renamed to the `.js` files they become; then, as the
 * package build does, the runtime entries (a worker's, a child process's) become one bundled file each.
 */
export async function compileSourceTree(tree: string, out: string): Promise<void> {
  const files: string[] = [];
  for (const entry of await readdir(join(tree, 'src'), { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
      files.push(join(entry.parentPath, entry.name));
  }
  const result = await build({
    entryPoints: files,
    outdir: out,
    outbase: tree,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    write: false,
  });
  for (const file of result.outputFiles) {
    const code = file.text.replace(/((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\.ts\2/g, '$1$2$3.js$2');
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, code);
  }
  // An older tree (bench/profile/import-cost.ts compares one) may lack a newer entry.
  if (!unbundled) await bundleRuntimeEntries(join(out, 'src'), { skipMissing: true });
}

/** Removes this process's build (also done on exit; a test runner may end its workers without an exit event). */
export function removeBuild(): void {
  if (PARENT_BUILD) return;
  rmSync(OUT, { recursive: true, force: true });
}

/** Builds of processes that ended without cleaning up (killed, or a test runner's worker). */
async function removeStaleBuilds(): Promise<void> {
  const entries = await readdir(BUILD_ROOT).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      process.kill(Number(entry), 0); // still running: leave it
    } catch {
      await rm(join(BUILD_ROOT, entry), { recursive: true, force: true });
    }
  }
}

/** Any module of src/ (named by its source path from the repository root), as measured. */
export async function load<T>(sourcePath: string): Promise<T> {
  if (fromSource) return (await import(pathToFileURL(join(ROOT, sourcePath)).href)) as T;
  const out = await buildOnce();
  return (await import(pathToFileURL(join(out, sourcePath.replace(/\.ts$/, '.js'))).href)) as T;
}

/** toolpool's public API, as measured. */
export function toolpool(): Promise<Toolpool> {
  return load<Toolpool>('src/index.ts');
}

export function validationModule(): Promise<Validation> {
  return load<Validation>('src/tools/validation.ts');
}

/** Environment for a child process that must measure the same build (built first if needed). */
export async function childEnvironment(): Promise<NodeJS.ProcessEnv> {
  if (fromSource) return { ...process.env };
  return { ...process.env, BENCH_TOOLPOOL_BUILD: await buildOnce() };
}

export function describeBuild(): string {
  return fromSource
    ? 'toolpool sources through tsx (BENCH_SOURCE=1)'
    : `toolpool compiled to JavaScript in ${relative(ROOT, BUILD_ROOT)}/<pid>/ (esbuild, per file, ${
        unbundled ? 'runtime entries not bundled (BENCH_UNBUNDLED=1)' : 'runtime entries bundled, as published'
      })`;
}
