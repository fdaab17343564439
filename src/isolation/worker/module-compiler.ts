import { build, type Plugin } from 'esbuild';
import { withEsbuild } from '../../tools/esbuild-service.ts';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { basename, dirname, extname, join } from 'node:path';
import { compileCacheDir, compiledRuntimeDir } from './cache-folder.ts';
import { moduleContentHash, textHash } from './module-hash.ts';
import { pathToFileURL } from 'node:url';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts', '.tsx']);

/** A tool module made importable by a plain worker, and what it is (see module-hash.ts). */
export interface RunnableModule {
  /** The file a worker imports: the module itself (JavaScript) or its compiled copy (TypeScript). */
  file: string;
  /** The hash of the module's own source files, the same wherever they are. */
  contentHash: string;
  /** The sha256 (hex) of the compiled file's content, when `file` is a compiled copy in the cache: workers import it only with this content. */
  codeHash?: string;
}

/**
 * A file of toolpool's runtime a worker or child loads. When it is a compiled
 * copy in the cache, `code` is what the host compiled, handed to the worker
 * in memory: the file on disk (which a tool without permissions could
 * rewrite) only names it in stack traces.
 */
export interface RuntimeFile {
  file: string;
  code?: string;
}

/**
 * Returns a path that a plain Node worker can import. JavaScript comes back
 * as is. TypeScript is compiled here, on the host, with esbuild — without
 * running it — because a loader like tsx needs a hooks thread, which a
 * permission-restricted worker may not start. Relative imports are bundled;
 * packages stay external, pinned to the absolute file they resolve to from
 * the source, so the output can live in a cache folder and still load the
 * same package copies as the source would.
 */
export async function toRunnableModule(file: string): Promise<string> {
  if (!TYPESCRIPT.has(extname(file))) return file;
  const given = precompiled.get(file);
  if (given !== undefined) return given.file;
  return (await compileModule(file)).file;
}

/** The same for a file of toolpool's own runtime, into the cache's `runtime/` folder. */
export async function toRunnableRuntime(file: string): Promise<string> {
  return (await runtimeFile(file)).file;
}

/** A file of toolpool's own runtime, compiled into the cache's `runtime/` folder when it is TypeScript, with its content's hash. */
export async function runtimeFile(file: string): Promise<RuntimeFile> {
  if (!TYPESCRIPT.has(extname(file))) return { file };
  const given = precompiled.get(file);
  if (given !== undefined) return given;
  const { file: out, code } = await compileTypeScript(file, compiledRuntimeDir());
  return { file: out, code };
}

/**
 * The same, with the module's content hash. A JavaScript module is read by
 * the same bundling pass (its output dropped), so that the files it imports
 * count in its hash as a TypeScript module's do.
 */
export async function compileModule(file: string): Promise<RunnableModule> {
  if (TYPESCRIPT.has(extname(file))) {
    const { code: _code, ...compiled } = await compileTypeScript(file, join(compileCacheDir(), 'modules'));
    return compiled;
  }
  try {
    return { file, contentHash: (await bundle(file)).contentHash };
  } catch {
    // A JavaScript module esbuild cannot follow (a syntax error, an odd import) is hashed alone; importing it in a worker says what is wrong.
    return { file, contentHash: textHash(await readFile(file, 'utf8')) };
  }
}

async function compileTypeScript(file: string, folder: string): Promise<RunnableModule & { code: string }> {
  const { code, contentHash } = await bundle(file);
  const codeHash = createHash('sha256').update(code).digest('hex');
  const out = join(folder, `${basename(file, extname(file))}-${codeHash.slice(0, 16)}.mjs`);
  await writeVerified(out, code);
  return { file: out, contentHash, codeHash, code };
}

/** The module with its relative imports bundled, and its content hash from the same pass. */
async function bundle(file: string): Promise<{ code: string; contentHash: string }> {
  const sources = new Map<string, string>();
  const result = await withEsbuild(() =>
    build({
      entryPoints: [file],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: TYPESCRIPT.has(extname(file)) ? 'inline' : false,
      logLevel: 'silent',
      plugins: [pinPackagesToSource(), keepImportMetaOfSource(sources)],
    }),
  );
  return {
    code: result.outputFiles[0]!.text,
    contentHash: moduleContentHash(file, result.metafile, sources, process.cwd()),
  };
}

/**
 * Files compiled by someone trusted (the host, for the process tier's child,
 * which may not run esbuild under permissions): source path → compiled path.
 */
const precompiled = new Map<string, RuntimeFile>();

export function usePrecompiled(files: Readonly<Record<string, RuntimeFile>>): void {
  for (const [source, out] of Object.entries(files)) precompiled.set(source, out);
}

/**
 * The cache is a shared folder: a tool that could write into it (one
 * without permissions) could leave a poisoned module under the name a
 * later executor would load. So an existing file is used only when its
 * content is exactly what was just compiled; otherwise it is replaced.
 * That is not enough after this: a file rewritten while the executor runs
 * would be imported by the module's next worker. So workers never trust the
 * file: they import the bytes they read only if those have the `codeHash`
 * the host computed here (src/isolation/worker/runtime/verified-import.ts).
 */
async function writeVerified(path: string, contents: string): Promise<void> {
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing === contents) return;
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  // Write then rename, so a concurrent reader never imports half a file.
  const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temp, contents);
  await rename(temp, path);
}

function pinPackagesToSource(): Plugin {
  return {
    name: 'toolpool-pin-packages',
    setup(builder) {
      builder.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.path.startsWith('node:') || isBuiltin(args.path)) return { path: args.path, external: true };
        if (args.pluginData === 'resolving') return undefined;
        const resolved = await builder.resolve(args.path, {
          kind: args.kind,
          resolveDir: args.resolveDir,
          importer: args.importer,
          pluginData: 'resolving',
        });
        if (resolved.errors.length > 0) return { errors: resolved.errors };
        return { path: pathToFileURL(resolved.path).href, external: true };
      });
    },
  };
}

/** `import.meta.url` in a bundled file must still name the file it was written in. Each source read is kept in `sources`, for the content hash. */
function keepImportMetaOfSource(sources: Map<string, string>): Plugin {
  return {
    name: 'toolpool-import-meta',
    setup(builder) {
      builder.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        sources.set(args.path, source);
        const contents = source.includes('import.meta')
          ? source
              .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
              .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)))
              .replaceAll('import.meta.filename', JSON.stringify(args.path))
          : source;
        return { contents, loader: loaderFor(args.path), resolveDir: dirname(args.path) };
      });
    },
  };
}

function loaderFor(path: string): 'ts' | 'tsx' | 'js' | 'jsx' {
  const ext = extname(path);
  if (ext === '.tsx') return 'tsx';
  if (ext === '.jsx') return 'jsx';
  return TYPESCRIPT.has(ext) ? 'ts' : 'js';
}
