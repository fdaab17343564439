import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve, sep } from 'node:path';

/** Opt-in file system permissions for tool code, enforced by Node's permission model. */
export interface Permissions {
  /** Folders or files tools may read. */
  fsRead?: readonly string[];
  /** Folders or files tools may write. */
  fsWrite?: readonly string[];
  /**
   * Network: a list of 'host:port' the sandbox tier lets through (nothing
   * else is reachable there); true/false on the worker and process tiers.
   */
  net?: boolean | readonly string[];
}

/**
 * The `execArgv` that puts a worker (or the process tier's child) under
 * Node's permission model: no file access outside the given roots, no
 * child processes, no nested workers, no native addons. `ownReads` are the
 * paths toolpool itself needs (its worker entry, the tool modules,
 * node_modules).
 *
 * Two traps of Node 20 shape this: overlapping paths (`/a` and `/a/b`)
 * abort the whole process with a native assertion, so nested paths are
 * folded into their parent; and a comma-separated list is no longer
 * accepted, so each path gets its own flag.
 */
export function permissionArgv(permissions: Permissions, ownReads: readonly string[]): string[] {
  const reads = foldNested([...(permissions.fsRead ?? []), ...ownReads].map(canonical));
  const writes = foldNested((permissions.fsWrite ?? []).map(canonical));
  return [
    '--experimental-permission',
    '--disable-warning=ExperimentalWarning',
    ...reads.map((path) => `--allow-fs-read=${path}`),
    ...writes.map((path) => `--allow-fs-write=${path}`),
  ];
}

/** Absolute, with symlinks resolved (Node checks the real path), no trailing separator. */
function canonical(path: string): string {
  const absolute = resolve(path);
  const real = existsSync(absolute) ? realpathSync(absolute) : absolute;
  return real.length > 1 && real.endsWith(sep) ? real.slice(0, -1) : real;
}

/** Drops every path that lies inside another one of the list (and duplicates). */
export function foldNested(paths: string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  const kept: string[] = [];
  for (const path of sorted) {
    const parent = kept.at(-1);
    if (parent !== undefined && (path === parent || path.startsWith(parent === sep ? sep : parent + sep))) continue;
    kept.push(path);
  }
  return kept;
}

/** The node_modules folder toolpool's own dependencies (piscina, comlink) are installed in. */
export function dependencyRoot(): string {
  const piscina = createRequire(import.meta.url).resolve('piscina');
  const marker = `${sep}node_modules${sep}`;
  return piscina.slice(0, piscina.lastIndexOf(marker) + marker.length - 1);
}

/** The nearest node_modules above a file, if any: packages a tool module imports live there. */
export function nearestNodeModules(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const candidate = resolve(dir, 'node_modules');
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}
