import { ToolpoolTypeError } from '../../core/error-codes.ts';
import { chownSync, lstatSync, mkdirSync, realpathSync, statSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';

/** The folder inside an `fsWrite` folder that holds each module's own space. */
export const SPACES_FOLDER = '.toolpool-modules';

/** A host folder shown at another path inside the sandbox. */
export interface WriteBind {
  source: string;
  target: string;
}

/**
 * How a sandbox sees `fsWrite`: each folder in it is the module's own space
 * (on the host `<folder>/.toolpool-modules/<name>-<hash>`, shown inside at
 * `<folder>` itself), so two modules given the same folder never read or
 * change each other's files. A folder also listed in `fsWriteShared`, a
 * file, or a path that does not exist yet is bound as it is, shared by
 * every module given it. `owner`: the uid and gid the spaces are made for
 * (a root host's sandbox user); the host's own otherwise.
 */
export function writeSpaces(
  fsWrite: readonly string[],
  fsWriteShared: readonly string[],
  domainKey: string,
  owner?: { uid: number; gid: number },
): { shared: string[]; spaces: WriteBind[] } {
  const sharedPaths = new Set(fsWriteShared.map((path) => resolve(path)));
  const shared: string[] = [];
  const spaces: WriteBind[] = [];
  for (const path of fsWrite) {
    const target = resolve(path);
    if (sharedPaths.has(target) || !isFolder(target)) {
      shared.push(path);
      continue;
    }
    spaces.push({ source: makeSpace(realpathSync(target), domainKey, owner), target });
  }
  return { shared, spaces };
}

/** The host path of a module's space in `folder`, for a domain key (see registry.ts's domainKey). */
export function spacePath(folder: string, domainKey: string): string {
  return join(folder, SPACES_FOLDER, spaceName(domainKey));
}

/** `<module name>-<8 hex of the key's hash>`: readable, and one per trust domain. */
export function spaceName(domainKey: string): string {
  const hash = createHash('sha256').update(domainKey).digest('hex').slice(0, 8);
  const path = domainKey.replace(/^(module|shared):/, '');
  const name = (domainKey.startsWith('module:') ? basename(path, extname(path)) : path)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 64);
  return `${name || 'module'}-${hash}`;
}

/**
 * Makes the space (and its parent, 0711: others may pass, not list) if
 * needed. Neither may be a symbolic link: a module that could once write
 * the folder must not send another module's space elsewhere.
 */
function makeSpace(folder: string, domainKey: string, owner: { uid: number; gid: number } | undefined): string {
  const parent = join(folder, SPACES_FOLDER);
  ensureFolder(parent, 0o711);
  const space = join(parent, spaceName(domainKey));
  ensureFolder(space, 0o700);
  if (owner) chownSync(space, owner.uid, owner.gid);
  return space;
}

function ensureFolder(path: string, mode: number): void {
  try {
    mkdirSync(path, { mode });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (!lstatSync(path).isDirectory())
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      `toolpool sandbox: ${path} is not a folder (a link or a file took its place); remove it`,
    );
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
