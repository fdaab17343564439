import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let cacheRoot: string | undefined;

/**
 * Where compiled modules live: a folder of this user's in the temporary
 * folder, reused across processes. Its name is predictable, so another
 * user could make it first and swap what a worker imports: it is used only
 * when it is a real folder (not a link) that this user owns and nobody else
 * may write; otherwise this process compiles into a private folder of its
 * own. Tool modules go to `modules/` (a domain's workers may read only its
 * own files there), toolpool's own runtime, when it runs from sources, to
 * `runtime/` (every worker may read it), and the CLI's V8 code cache to
 * `v8/` (src/cli/code-cache.ts). No tool behind a wall may write any of
 * it: fsWrite may not cover this folder, and the sandbox binds none of it.
 */
export function compileCacheDir(): string {
  if (cacheRoot) return cacheRoot;
  const shared = join(tmpdir(), `toolpool-modules-${process.getuid?.() ?? 'user'}`);
  cacheRoot = ownedFolder(shared) ? shared : privateCache();
  for (const sub of ['modules', 'runtime']) mkdirSync(join(cacheRoot, sub), { recursive: true, mode: 0o755 });
  return cacheRoot;
}

/** Toolpool's own compiled runtime (its worker entry, the process tier's child entries). */
export function compiledRuntimeDir(): string {
  return join(compileCacheDir(), 'runtime');
}

function ownedFolder(path: string): boolean {
  try {
    mkdirSync(path, { mode: 0o755 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  try {
    const stats = lstatSync(path);
    const uid = process.getuid?.();
    return (
      stats.isDirectory() &&
      !stats.isSymbolicLink() &&
      (uid === undefined || stats.uid === uid) &&
      (stats.mode & 0o022) === 0
    );
  } catch {
    return false;
  }
}

function privateCache(): string {
  const folder = mkdtempSync(join(tmpdir(), `toolpool-modules-${process.getuid?.() ?? 'user'}-`));
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  return folder;
}
