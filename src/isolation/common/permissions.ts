import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { dirname, join, resolve, sep } from 'node:path';
import type { Permissions } from '../../core/options.ts';

export type { Permissions };

/** What the running Node line's permission model can do. */
export interface PermissionSupport {
  /** The stable `--permission` flag (22.13+, 23.5+); before it only `--experimental-permission`. */
  stableFlag: boolean;
  /** A worker accepts the permission flags in its `execArgv` (measured: 20, 22, 24 and 26 all do with the flag they know). */
  perWorker: boolean;
  /** `--allow-net` exists (Node 25+): under permissions the network is denied without it. */
  net: boolean;
  /**
   * A worker under the permission flags is confined to what they grant.
   * Measured false on Node 22, 24 and 26: such a worker may read everything
   * under its process's working folder. Where it is false, tools of the
   * worker tier run in the process tier instead, whose child has an empty
   * working folder of its own. Absent until measured (see measurePermissionSupport).
   */
  confinesWorkers?: boolean;
}

let measured: PermissionSupport | undefined;

/** Measured once: the flags this Node knows, and whether a worker takes them. */
export function permissionSupport(): PermissionSupport {
  if (measured) return measured;
  const flags = process.allowedNodeEnvironmentFlags;
  const stableFlag = flags.has('--permission');
  measured = { stableFlag, perWorker: workerTakesFlag(permissionFlag(stableFlag)), net: flags.has('--allow-net') };
  return measured;
}

let confinement: Promise<boolean> | undefined;

/**
 * The permission support with `confinesWorkers` measured: once per
 * process, by a worker under the flags that asks Node whether it may read
 * a file in the working folder it was not granted.
 */
export async function measurePermissionSupport(): Promise<PermissionSupport> {
  const support = permissionSupport();
  if (!support.perWorker) return { ...support, confinesWorkers: false };
  confinement ??= workerIsConfined(permissionFlag(support.stableFlag));
  return { ...support, confinesWorkers: await confinement };
}

function workerIsConfined(flag: string): Promise<boolean> {
  const granted = mkdtempSync(join(tmpdir(), 'toolpool-confine-'));
  const code = `require('node:worker_threads').parentPort.postMessage(process.permission.has('fs.read', require('node:path').join(process.cwd(), 'toolpool-confinement-probe')))`;
  const worker = new Worker(code, {
    eval: true,
    execArgv: [flag, '--disable-warning=ExperimentalWarning', `--allow-fs-read=${granted}`],
    stdout: true,
    stderr: true,
  });
  return new Promise<boolean>((resolve) => {
    worker.once('message', (readsWorkingFolder: unknown) => resolve(readsWorkingFolder === false));
    worker.once('error', () => resolve(false));
    worker.once('exit', () => resolve(false));
  }).finally(() => {
    void worker.terminate();
    rmSync(granted, { recursive: true, force: true });
  });
}

let workingFolder: string | undefined;

/**
 * An empty folder of this process, the working folder of process-tier
 * children under permissions: what a worker there may read of its working
 * folder (Node 22+) is then nothing. Removed when this process exits.
 */
export function emptyWorkingFolder(): string {
  if (workingFolder) return workingFolder;
  const folder = mkdtempSync(join(tmpdir(), 'toolpool-cwd-'));
  workingFolder = folder;
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

function permissionFlag(stable: boolean): string {
  return stable ? '--permission' : '--experimental-permission';
}

/**
 * Node 24 dropped `--experimental-permission`, and a worker given it fails
 * with ERR_WORKER_INVALID_EXEC_ARGV; it takes `--permission`. Rather than
 * trust a version table, try it: the worker is refused (or not) when it is
 * constructed, and is stopped at once.
 */
function workerTakesFlag(flag: string): boolean {
  try {
    const worker = new Worker('', {
      eval: true,
      execArgv: [flag, '--disable-warning=ExperimentalWarning'],
      stdout: true,
      stderr: true,
    });
    void worker.terminate();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_WORKER_INVALID_EXEC_ARGV') return false;
    throw error;
  }
}

/**
 * The `execArgv` that puts one worker under Node's permission model: no
 * file access outside the given roots, no child processes, no nested
 * workers, no native addons, and on Node 25+ no network unless
 * `permissions.net` is true. `ownReads` are the paths toolpool itself needs
 * (its worker entry, the tool modules, node_modules).
 *
 * A worker must never get an explicit `execArgv` without these flags in a
 * permission-restricted process: measured on 20-26, `execArgv: []` there
 * starts a worker with no restrictions at all.
 *
 * Two traps of Node 20 shape this: overlapping paths (`/a` and `/a/b`)
 * abort the whole process with a native assertion, so nested paths are
 * folded into their parent; and a comma-separated list is no longer
 * accepted, so each path gets its own flag.
 */
export function permissionArgv(
  permissions: Permissions,
  ownReads: readonly string[],
  support = permissionSupport(),
): string[] {
  return [
    permissionFlag(support.stableFlag),
    ...netFlags(permissions, support),
    '--disable-warning=ExperimentalWarning',
    ...pathFlags(permissions, ownReads),
  ];
}

/**
 * The flags of the process tier's child itself, so its main thread is as
 * restricted as its workers. It must start its pool (`--allow-worker`);
 * each of its workers gets `permissionArgv` again, which has no
 * `--allow-worker`, so tools cannot start nested workers.
 */
export function processPermissionArgv(
  permissions: Permissions,
  ownReads: readonly string[],
  support = permissionSupport(),
): string[] {
  return [
    permissionFlag(support.stableFlag),
    '--allow-worker',
    ...netFlags(permissions, support),
    // Both warnings are about flags toolpool chose on purpose; they would print on every child start.
    '--disable-warning=ExperimentalWarning',
    '--disable-warning=SecurityWarning',
    ...pathFlags(permissions, ownReads),
  ];
}

/** Node 25+ denies the network under permissions unless allowed; before 25 there is nothing to pass. */
function netFlags(permissions: Permissions, support: PermissionSupport): string[] {
  return support.net && permissions.net === true ? ['--allow-net'] : [];
}

function pathFlags(permissions: Permissions, ownReads: readonly string[]): string[] {
  const reads = foldNested([...(permissions.fsRead ?? []), ...ownReads].map(canonical));
  const writes = foldNested((permissions.fsWrite ?? []).map(canonical));
  return [...reads.map((path) => `--allow-fs-read=${path}`), ...writes.map((path) => `--allow-fs-write=${path}`)];
}

/** A write root that contains `folder`, is it, or lies inside it: a grant that reaches into the folder. */
export function writeRootOverlapping(permissions: Permissions, folder: string): string | undefined {
  const target = canonical(folder);
  return (permissions.fsWrite ?? []).find((path) => {
    const root = canonical(path);
    return within(target, root) || within(root, target);
  });
}

/** `path` is `folder` or inside it. */
function within(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder === sep ? sep : folder + sep);
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

/** The node_modules folder toolpool's own dependencies (piscina, ajv, re2js) are installed in. */
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
