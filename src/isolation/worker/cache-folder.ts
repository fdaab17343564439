import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';

let cacheRoot: string | undefined;

/**
 * Where compiled modules live: a folder of this user's in the temporary
 * folder, reused across processes. Its name is predictable, so another
 * user could make it first and swap what a worker imports: it is used only
 * when it is a real folder (not a link) that this user owns and nobody else
 * may write; otherwise this process compiles into a private folder of its
 * own. Tool modules go to `modules/` (a domain's workers may read only its
 * own files there), toolpool's own runtime, when it runs from sources, to
 * `runtime/` (every worker may read it). No tool behind a wall may write
 * any of it: fsWrite may not reach into this folder, and the sandbox binds
 * only `runtime/`, read-only.
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
  return ownedBy(path, 0o022);
}

/** A real folder (not a link) that this user owns, with none of the `forbidden` mode bits (0o022: nobody else may write). */
function ownedBy(path: string, forbidden: number): boolean {
  try {
    const stats = lstatSync(path);
    const uid = process.getuid?.();
    return (
      stats.isDirectory() &&
      !stats.isSymbolicLink() &&
      (uid === undefined || stats.uid === uid) &&
      (stats.mode & forbidden) === 0
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

/**
 * The CLI's V8 code cache (src/cli/code-cache.ts) lives under this folder:
 * `$XDG_CACHE_HOME/toolpool`, or `~/.cache/toolpool`. Not in the temporary
 * folder: which one that is follows TMPDIR, so a tool granted `fsWrite` on
 * `/tmp` by a host whose TMPDIR is elsewhere could plant the folder a later
 * command with another TMPDIR trusts. Code read from it runs on the host,
 * with no content check: fsWrite may not overlap it (protectedFolders).
 */
export function codeCacheRoot(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'toolpool');
}

/**
 * `<codeCacheRoot>/v8`, made for this user alone (0700), or undefined when
 * it is not a real folder that this user owns and nobody else may enter: the
 * folders Node makes in it (0777 less the umask) are then out of others'
 * reach whatever the umask.
 */
export function ownedCodeCacheDir(): string | undefined {
  const folder = join(codeCacheRoot(), 'v8');
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch {
    return undefined;
  }
  return ownedBy(codeCacheRoot(), 0o022) && ownedBy(folder, 0o077) ? folder : undefined;
}

/** The folders whose contents a later executor or `toolpool` command relies on: no tool may be granted a write inside or over them. */
export function protectedFolders(): string[] {
  return [compileCacheDir(), codeCacheRoot()];
}
