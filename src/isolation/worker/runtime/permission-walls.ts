/**
 * What Node's permission model leaves open, closed in every worker that
 * runs under it (the process tier's child under `permissions`, the worker
 * tier on a line that confines workers, the sandbox's child), before any
 * tool code runs. Each of these was measured open on Node 20-26:
 *
 * - V8 opens files itself, past the permission model: a tool that sets
 *   `--logfile` (or `--prof`, a `--trace-*` file, `--perf-*`) through
 *   `v8.setFlagsFromString` has V8 create or truncate any path the process
 *   may write when the next worker starts. Setting V8 flags is refused;
 *   so are `v8.setHeapSnapshotNearHeapLimit` (snapshots land in the
 *   working folder, which Node 20 and 22 do not check) and
 *   `module.enableCompileCache` (a folder of the tool's choosing).
 * - `node:sqlite` opens, ATTACHes and VACUUMs INTO any path, unchecked.
 *   It is refused as a whole: an in-memory database still writes files
 *   with `VACUUM INTO`.
 * - A Unix socket is a file, but connecting to one is not a file access to
 *   the permission model (Node 20-24 connect to any; 25+ refuse without
 *   `--allow-net`, and allow any with it). Connecting to or listening on a
 *   socket path needs `fs.write` permission on that path; abstract sockets
 *   (no file at all) are refused.
 * - Module resolution stats paths the model denies (Node 20 reads a
 *   package.json `main` outside the roots), and tells "denied" from "not
 *   found" (22+). Outside what may be read, every resolution fails with
 *   one error that does not depend on what exists there (on Node 20,
 *   `import()` still tells denied from missing: it has no in-thread hooks).
 *
 * The replacements are non-writable and non-configurable and the originals
 * are kept only in this module's closures, so tool code cannot put them
 * back. Structure (a mount namespace) would be a better wall than these
 * guards; the sandbox tier is that wall.
 */
import Module, { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';

type PermissionApi = { has(scope: string, reference?: string): boolean };

const permission = (process as unknown as { permission?: PermissionApi }).permission;

/** Closes the holes above when this thread runs under the permission model; does nothing otherwise. */
export function holdPermissionWalls(): void {
  if (!permission) return;
  refuseV8Files();
  refuseSqlite();
  guardSocketPaths();
  hideModuleProbes();
  syncBuiltinESMExports();
}

function seal(holder: object, key: string, value: unknown): void {
  Object.defineProperty(holder, key, { value, writable: false, configurable: false, enumerable: true });
}

function denied(what: string, instead: string): Error {
  const error = new Error(`toolpool: ${what} is not available under permissions: ${instead}`) as NodeJS.ErrnoException;
  error.code = 'ERR_ACCESS_DENIED';
  return error;
}

const mayRead = (path: string): boolean => permission!.has('fs.read', path);
const mayWrite = (path: string): boolean => permission!.has('fs.write', path);

function refuseV8Files(): void {
  const why = "V8 would open files that Node's permission model does not check; use the sandbox tier";
  for (const name of ['setFlagsFromString', 'setHeapSnapshotNearHeapLimit'] as const) {
    seal(v8, name, function refused() {
      throw denied(`v8.${name}`, why);
    });
  }
  for (const name of ['enableCompileCache', 'flushCompileCache'] as const) {
    if (name in Module) {
      seal(Module, name, function refused() {
        throw denied(`module.${name}`, why);
      });
    }
  }
}

function refuseSqlite(): void {
  let sqlite: Record<string, unknown>;
  try {
    sqlite = createRequire(import.meta.url)('node:sqlite') as Record<string, unknown>;
  } catch {
    return; // not on this line (or behind a flag not given): tools cannot load it either
  }
  const why =
    "Node's permission model does not check the files it opens (a path, ATTACH, VACUUM INTO); use the sandbox tier";
  for (const name of Object.keys(sqlite)) {
    if (typeof sqlite[name] !== 'function') continue;
    seal(sqlite, name, function refused() {
      throw denied(`node:sqlite (${name})`, why);
    });
  }
}

/** The Unix socket path a `connect` or `listen` call names, if any (Node's own argument forms, normalized or not). */
function socketPath(args: unknown[]): string | undefined {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (typeof first === 'string') return Number.isNaN(Number(first)) ? first : undefined;
  if (typeof first === 'object' && first !== null && 'path' in first) {
    const path = (first as { path?: unknown }).path;
    if (typeof path === 'string') return path;
    if (path !== undefined && path !== null) return String(path);
  }
  return undefined;
}

/**
 * Where the sandbox binds its host-side proxy's socket (SANDBOX_SOCKET in
 * the sandbox's net plan): it tunnels only the listed `permissions.net`
 * targets. It exists only inside a sandbox's mount namespace (the host's
 * proxy socket lives in a folder of its own), so on the host this names
 * nothing a tool could reach.
 */
const SANDBOX_PROXY_SOCKET = '/run/toolpool/net.sock';

function socketProblem(path: string): Error | undefined {
  if (path === SANDBOX_PROXY_SOCKET) return undefined;
  if (path.startsWith('\0') || path.startsWith('@')) {
    return denied(
      'an abstract Unix socket',
      'it is no file the permissions could grant; use the sandbox tier, whose network namespace has none of the host',
    );
  }
  const absolute = resolve(path);
  if (mayWrite(absolute)) return undefined;
  return denied(
    `the Unix socket ${JSON.stringify(absolute)}`,
    'a socket file is reached only inside a permissions.fsWrite root',
  );
}

function guardSocketPaths(): void {
  const connect = net.Socket.prototype.connect;
  seal(net.Socket.prototype, 'connect', function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const path = socketPath(args);
    const problem = path === undefined ? undefined : socketProblem(path);
    if (!problem) return Reflect.apply(connect, this, args);
    process.nextTick(() => this.destroy(problem));
    return this;
  });
  const listen = net.Server.prototype.listen;
  seal(net.Server.prototype, 'listen', function guardedListen(this: net.Server, ...args: unknown[]) {
    const path = socketPath(args);
    const problem = path === undefined ? undefined : socketProblem(path);
    if (problem) throw problem;
    return Reflect.apply(listen, this, args);
  });
}

/** The one error every resolution outside the readable paths ends in, whatever is there. */
function notFound(request: string, code: 'MODULE_NOT_FOUND' | 'ERR_MODULE_NOT_FOUND'): Error {
  const error = new Error(`Cannot find module '${request}'`) as NodeJS.ErrnoException;
  error.code = code;
  return error;
}

const isPathRequest = (request: string): boolean =>
  isAbsolute(request) || request === '.' || request === '..' || /^\.\.?[\\/]/.test(request);
const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

type CjsModule = {
  _resolveFilename(
    request: string,
    parent: { filename?: string | null } | undefined,
    isMain: boolean,
    options?: { paths?: string[] },
  ): string;
  _findPath(request: string, paths: string[], isMain: boolean): string | false;
  findPackageJSON?: (specifier: string | URL, base?: string | URL) => string | undefined;
  registerHooks?: (hooks: {
    resolve(
      specifier: string,
      context: { parentURL?: string; conditions?: readonly string[] },
      next: (specifier: string, context: unknown) => { url: string },
    ): { url: string };
  }) => unknown;
  isBuiltin(request: string): boolean;
};

function hideModuleProbes(): void {
  const cjs = Module as unknown as CjsModule;
  const resolveFilename = cjs._resolveFilename;
  const readableOptions = (options?: { paths?: string[] }) =>
    options?.paths ? { ...options, paths: options.paths.filter((path) => mayRead(resolve(path))) } : options;
  seal(
    cjs,
    '_resolveFilename',
    function hiddenResolve(
      this: unknown,
      request: string,
      parent: { filename?: string | null } | undefined,
      isMain: boolean,
      options?: { paths?: string[] },
    ) {
      if (typeof request !== 'string' || cjs.isBuiltin(request))
        return Reflect.apply(resolveFilename, this, [request, parent, isMain, options]);
      if (isPathRequest(request) && !options?.paths) {
        const base = parent?.filename ? dirname(parent.filename) : process.cwd();
        if (!mayRead(resolve(base, request))) throw notFound(request, 'MODULE_NOT_FOUND');
      }
      let found: string;
      try {
        found = Reflect.apply(resolveFilename, this, [request, parent, isMain, readableOptions(options)]) as string;
      } catch (error) {
        // Denied, or not found past what may be read (with a package.json's `main` in its text on Node 20): the same error.
        if (codeOf(error) === 'ERR_ACCESS_DENIED' || (codeOf(error) === 'MODULE_NOT_FOUND' && !isPathRequest(request)))
          throw notFound(request, 'MODULE_NOT_FOUND');
        throw error;
      }
      if (!cjs.isBuiltin(found) && !mayRead(found)) throw notFound(request, 'MODULE_NOT_FOUND');
      return found;
    },
  );

  const findPath = cjs._findPath;
  seal(cjs, '_findPath', function hiddenFindPath(this: unknown, request: string, paths: string[], isMain: boolean) {
    if (typeof request === 'string' && isAbsolute(request) && !mayRead(request)) return false;
    const readablePaths = Array.isArray(paths)
      ? paths.filter((path) => typeof path === 'string' && mayRead(resolve(path)))
      : paths;
    try {
      const found = Reflect.apply(findPath, this, [request, readablePaths, isMain]) as string | false;
      return found && !mayRead(found) ? false : found;
    } catch (error) {
      if (codeOf(error) === 'ERR_ACCESS_DENIED') return false;
      throw error;
    }
  });

  const findPackageJSON = cjs.findPackageJSON;
  if (findPackageJSON) {
    seal(
      cjs,
      'findPackageJSON',
      function hiddenFindPackageJSON(this: unknown, specifier: string | URL, base?: string | URL) {
        try {
          const found = Reflect.apply(findPackageJSON, this, [specifier, base]) as string | undefined;
          return found !== undefined && !mayRead(found) ? undefined : found;
        } catch (error) {
          if (codeOf(error) === 'ERR_ACCESS_DENIED') return undefined;
          throw error;
        }
      },
    );
  }

  // ESM: in-thread resolve hooks (22.15+, 23.5+). Node 20 has none; its import() still tells denied from missing.
  cjs.registerHooks?.({
    resolve(specifier, context, next) {
      // The same hooks see require() (22+): its error keeps require's code.
      const code = context.conditions?.includes('require') ? 'MODULE_NOT_FOUND' : 'ERR_MODULE_NOT_FOUND';
      const target = fileTarget(specifier, context.parentURL);
      if (target !== undefined && !mayRead(target)) throw notFound(specifier, code);
      let resolved: { url: string };
      try {
        resolved = next(specifier, context);
      } catch (error) {
        if (codeOf(error) === 'ERR_ACCESS_DENIED' || (codeOf(error) === code && target === undefined))
          throw notFound(specifier, code);
        throw error;
      }
      if (resolved.url.startsWith('file:') && !mayRead(fileURLToPath(resolved.url))) throw notFound(specifier, code);
      return resolved;
    },
  });
}

/** The file an ESM specifier names by path or file URL (not a package name), resolved against its importer. */
function fileTarget(specifier: string, parentURL: string | undefined): string | undefined {
  try {
    if (specifier.startsWith('file:')) return fileURLToPath(specifier);
    if (isAbsolute(specifier)) return specifier;
    if (/^\.\.?(\/|$)/.test(specifier))
      return fileURLToPath(new URL(specifier, parentURL ?? pathToFileURL(`${process.cwd()}/`).href));
  } catch {
    return undefined;
  }
  return undefined;
}
