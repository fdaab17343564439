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
import { build, transform } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** The entry files, relative to the compiled src/ folder. */
export const RUNTIME_ENTRIES = [
  'isolation/worker/runtime/tool-worker.js',
  'isolation/process/process-child.js',
  'isolation/sandbox/sandbox-child.js',
  'mcp-client/sandbox-entry.js',
];

/** Rewrites each runtime entry under `srcFolder` (tsc's or the benchmarks' JavaScript) as one bundled file, in place. */
export async function bundleRuntimeEntries(srcFolder) {
  for (const entry of RUNTIME_ENTRIES) await bundleInPlace(join(srcFolder, entry));
}

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
    plugins: [ownImportMetaUrl(dirname(entryFile))],
  });
  for (const file of result.outputFiles) await writeFile(file.path, file.contents);
}

/**
 * Each bundled module's `import.meta.url` becomes its original file's URL,
 * relative to the bundle's. esbuild's `define` replaces the expression only
 * (a string that spells it, as in module-compiler.ts, is left alone).
 */
const UNSUPPORTED = '__toolpool_import_meta_dirname_or_filename';

function ownImportMetaUrl(bundleFolder) {
  return {
    name: 'toolpool-own-import-meta-url',
    setup(builder) {
      builder.onLoad({ filter: /\.m?js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        const own = relative(bundleFolder, args.path).split(sep).join('/');
        const name = '__toolpool_module_url';
        const { code } = await transform(source, {
          // dirname and filename are marked, so a use of them fails the build here rather than point at the bundle.
          define: { 'import.meta.url': name, 'import.meta.dirname': UNSUPPORTED, 'import.meta.filename': UNSUPPORTED },
          format: 'esm',
          loader: 'js',
        });
        if (code.includes(UNSUPPORTED))
          throw new Error(
            `${args.path}: import.meta.dirname or filename in a runtime module: give it its own file's value here`,
          );
        // On the module's first line, so its lines keep their numbers.
        const url = `const ${name} = new URL(${JSON.stringify(own.startsWith('.') ? own : `./${own}`)}, import.meta.url).href; `;
        return { contents: url + code, loader: 'js', resolveDir: dirname(resolve(args.path)) };
      });
    },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const folder = process.argv[2];
  if (!folder) {
    console.error('usage: node scripts/bundle-runtime.mjs <folder of the compiled src/>');
    process.exit(2);
  }
  await bundleRuntimeEntries(folder);
}
