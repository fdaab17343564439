// The files toolpool starts in a new thread or process (a tool's worker, the
// process and sandbox tiers' children, the MCP client's sandbox entry) are
// rewritten by `npm run build`, after tsc, as one bundled file each: a worker
// then loads one file instead of ~25 (each one a resolve, a read and a link
// of an ES module on every worker start), a process child one instead of
// ~35. The main thread keeps tsc's file-per-module output (its stack traces
// and what `import` of a subpath gives stay as they were). The benchmarks'
// build does the same (bench/lib/toolpool.ts), so they measure what ships.
//
//   node scripts/bundle-runtime.mjs <folder of the compiled src/>
//
// A module that reads `import.meta.url` (to find a file next to it) gets its
// own file's URL, computed from the bundle's, as it had when loaded alone.
// Packages (piscina, esbuild, ...) stay imports.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The entry files, relative to the compiled src/ folder. */
const RUNTIME_ENTRIES = [
  'isolation/worker/runtime/tool-worker.js',
  'isolation/process/process-child.js',
  'isolation/sandbox/sandbox-child.js',
  'mcp-client/sandbox-entry.js',
];

/**
 * Rewrites each runtime entry under `srcFolder` (tsc's or the benchmarks' JavaScript) as one bundled file, in
 * place. `skipMissing`: an entry the tree lacks is left out (the benchmarks' build of an older tree); the
 * package build fails on it instead (a renamed entry must be renamed here too).
 */
export async function bundleRuntimeEntries(srcFolder, { skipMissing = false } = {}) {
  for (const entry of RUNTIME_ENTRIES) {
    const file = join(srcFolder, entry);
    if (skipMissing && !existsSync(file)) continue;
    await bundleInPlace(file);
  }
}

/** Declared by the banner of every bundle, before any of its modules. */
const BUNDLE_URL = '__toolpool_bundle_url';
/** Each module that reads `import.meta.url` declares its own (esbuild renames them apart). */
const MODULE_URL = '__toolpool_module_url';
/** What `import.meta.dirname` and `import.meta.filename` become: its presence in a bundle fails the build. */
const UNSUPPORTED = '__toolpool_import_meta_dirname_or_filename';

async function bundleInPlace(entryFile) {
  const result = await build({
    entryPoints: [entryFile],
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    // tsc's per-file maps are read (esbuild follows sourceMappingURL), so the bundle maps to the same sources.
    sourcemap: 'linked',
    outfile: entryFile,
    allowOverwrite: true,
    logLevel: 'silent',
    // define replaces the expression only: a string that spells it (module-compiler.ts has some) is left alone.
    // The banner is not rewritten by define, so it still reads the bundle's own URL.
    define: { 'import.meta.url': MODULE_URL, 'import.meta.dirname': UNSUPPORTED, 'import.meta.filename': UNSUPPORTED },
    banner: { js: `const ${BUNDLE_URL} = import.meta.url;` },
    plugins: [ownModuleUrl(dirname(entryFile))],
  });
  for (const file of result.outputFiles) {
    if (file.text.includes(UNSUPPORTED))
      throw new Error(
        `${entryFile}: a bundled module reads import.meta.dirname or filename: give it its own value here`,
      );
    await writeFile(file.path, file.contents);
  }
}

/**
 * Each bundled module that reads `import.meta.url` gets its own file's URL,
 * relative to the bundle's, declared on its first line (so its lines keep
 * their numbers and tsc's source map still fits).
 */
function ownModuleUrl(bundleFolder) {
  return {
    name: 'toolpool-own-module-url',
    setup(builder) {
      builder.onLoad({ filter: /\.m?js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        const own = relative(bundleFolder, args.path).split(sep).join('/');
        const url = JSON.stringify(own.startsWith('.') ? own : `./${own}`);
        return {
          contents: `const ${MODULE_URL} = new URL(${url}, ${BUNDLE_URL}).href; ${source}`,
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const folder = process.argv[2];
  if (!folder) {
    console.error('usage: node scripts/bundle-runtime.mjs <folder of the compiled src/>');
    process.exit(2);
  }
  await bundleRuntimeEntries(folder);
}
