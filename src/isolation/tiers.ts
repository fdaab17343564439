import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { PermissionErrors, SandboxErrors } from '../core/errors.ts';
import { compiledRuntimeDir, protectedFolders } from './worker/cache-folder.ts';
import { PoolSet } from './worker/pool-set.ts';
import { workerEntryReadPaths } from './worker/worker-pool.ts';
import type { HostFunctions, Isolation } from '../core/tool.ts';
import {
  dependencyRoot,
  emptyWorkingFolder,
  nearestNodeModules,
  permissionArgv,
  permissionSupport,
  processPermissionArgv,
  writeRootOverlapping,
  type PermissionSupport,
  type Permissions,
} from './common/permissions.ts';
import type { ChildLauncher } from './process/child-launcher.ts';
import { linkLeavingRoots } from './common/granted-links.ts';
import type { ProcessTier, ProcessTierOptions } from './process/process-tier.ts';
import { parseNetAllowlist } from './sandbox/net-allowlist.ts';
import type { SandboxTier } from './sandbox/sandbox-tier.ts';
import { sandboxAccessProblem } from './sandbox/sandbox-user.ts';
import type { ThreadBudget } from './worker/thread-budget.ts';
import type { ToolTier } from '../core/tier.ts';
import { ToolpoolTypeError } from '../core/error-codes.ts';

export interface TierOptions {
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  env: Record<string, string>;
  permissions?: Permissions;
  hostFunctions: HostFunctions;
  defaultMemoryMb: number;
  /** How long importing a tool module to read its definition may take. */
  loadTimeoutMs: number;
  /** The runnable tool module files, so permission-restricted workers may load them (and nothing else of the compile cache). */
  moduleFiles: string[];
  /** The modules' own files, whose nearest node_modules their workers may read (not the compiled copies': those live in the cache). */
  moduleSources?: string[];
  /** What this Node's permission model can do; measured when not given (tests give it to try the fallbacks). */
  permissionSupport?: PermissionSupport;
  /** The cap on threads these tiers share with other trust domains' (see ThreadBudget). */
  budget?: ThreadBudget;
  /** The trust domain's key (registry.ts): a sandbox's uid under a root host and its own fsWrite space come from it. */
  domainKey?: string;
}

/**
 * The process and sandbox tiers' code (the child's launch, its channel, the
 * sandbox's bubblewrap arguments and network proxy: some 25 files), loaded
 * the first time a tool needs one of them: most executors run every tool in
 * the worker tier and never do.
 */
let processTierModule: Promise<typeof import('./process/process-tier.ts')> | undefined;
let sandboxTierModule: Promise<typeof import('./sandbox/sandbox-tier.ts')> | undefined;
const loadProcessTier = () => (processTierModule ??= import('./process/process-tier.ts'));
const loadSandboxTier = () => (sandboxTierModule ??= import('./sandbox/sandbox-tier.ts'));

/** The isolation tiers of one executor, each started on first use. */
export class Tiers {
  #worker: PoolSet | undefined;
  #process: ProcessTier | undefined;
  #sandbox: SandboxTier | undefined;
  /** A process or sandbox tier whose module is loading: every request meanwhile waits for the same one. */
  #processStarting: Promise<ProcessTier> | undefined;
  #sandboxStarting: Promise<SandboxTier> | undefined;
  #measuredSupport: PermissionSupport | undefined;

  constructor(private readonly options: TierOptions) {}

  /** Measured only when permissions are asked for (it starts a worker once per process). */
  get #support(): PermissionSupport {
    return (this.#measuredSupport ??= this.options.permissionSupport ?? permissionSupport());
  }

  /**
   * The tier for an isolation level. With permissions on a Node whose
   * workers refuse the permission flags, the worker tier is the process
   * tier: the permissions then hold for the whole child process.
   *
   * A promise only until the process or sandbox tier's module has loaded
   * (see loadProcessTier): the worker tier, and a tier once started, is
   * returned as is, so a call pays no extra promise for it.
   */
  get(isolation: Isolation): ToolTier | Promise<ToolTier> {
    this.check(isolation);
    if (isolation === 'sandbox') return this.#sandbox ?? this.#sandboxTier();
    if (this.#runsInProcess(isolation)) return this.#process ?? this.#processTier();
    return (this.#worker ??= new PoolSet(this.#poolOptions()));
  }

  /** Throws when the permissions cannot be enforced for tools of this isolation level on this Node line. */
  check(isolation: Isolation): void {
    if (this.options.permissions) checkIsolation(isolation, this.options.permissions, this.#support);
  }

  #runsInProcess(isolation: Isolation): boolean {
    return runsInProcess(isolation, this.options.permissions, () => this.#support);
  }

  /** Options of a process tier; a launcher other than the default one (bwrap) makes another tier of the same kind. */
  processOptions(launcher?: ChildLauncher, permissions = this.options.permissions): ProcessTierOptions {
    const {
      permissions: _given,
      moduleFiles: _files,
      moduleSources: _sources,
      permissionSupport: _support,
      domainKey: _key,
      ...rest
    } = this.options;
    const ownReads = this.#ownReads();
    return {
      ...rest,
      // Never [] under permissions: a worker with an explicit empty execArgv in a restricted process is unrestricted.
      // Workers that refuse the flags inherit the child's own (which allow nested workers).
      execArgv: !permissions
        ? []
        : this.#support.perWorker
          ? permissionArgv(permissions, ownReads, this.#support)
          : 'inherit',
      ...(launcher ? { launcher } : {}),
      childFlags: permissions ? processPermissionArgv(permissions, ownReads, this.#support) : [],
      guardWorkers: permissions !== undefined && this.#support.perWorker,
      readPaths: [...ownReads, ...(permissions?.fsRead ?? [])],
      writePaths: [...(permissions?.fsWrite ?? [])],
      ...(permissions?.net !== undefined ? { net: permissions.net } : {}),
      // Its workers may read whatever is under its working folder (Node 22+): under permissions, an empty one.
      ...(permissions ? { cwd: emptyWorkingFolder() } : {}),
    };
  }

  /** Settles once the tiers in use can run: rejects when the sandbox tier is asked for and bubblewrap cannot start. */
  async ready(isolation: Isolation): Promise<void> {
    if (isolation === 'sandbox') await (this.#sandbox ?? (await this.#sandboxTier())).ready;
  }

  async close(): Promise<void> {
    // A tier still loading is started all the same, and closed with the others.
    await Promise.allSettled([this.#processStarting, this.#sandboxStarting]);
    await Promise.all([this.#worker?.close(), this.#process?.close(), this.#sandbox?.close()]);
  }

  #processTier(): Promise<ProcessTier> {
    this.#processStarting ??= loadProcessTier().then(
      ({ ProcessTier }) => (this.#process = new ProcessTier(this.processOptions())),
    );
    return this.#processStarting;
  }

  /**
   * The sandbox tier: the process tier's options with its own launcher. A
   * `permissions.net` list is enforced by the sandbox's network namespace
   * and the host-side proxy, so Node's own network permission (25+) is on
   * for it: the forwarders and the tools must reach the loopback ports.
   */
  #sandboxTier(): Promise<SandboxTier> {
    this.#sandboxStarting ??= loadSandboxTier().then(
      ({ SandboxTier }) => (this.#sandbox = this.#newSandbox(SandboxTier)),
    );
    return this.#sandboxStarting;
  }

  #newSandbox(Sandbox: typeof SandboxTier): SandboxTier {
    const { permissions } = this.options;
    const targets = Array.isArray(permissions?.net) ? parseNetAllowlist(permissions.net) : [];
    const forNode =
      permissions && Array.isArray(permissions.net) ? { ...permissions, net: targets.length > 0 } : permissions;
    const domain = {
      key: this.options.domainKey ?? `module:${this.options.moduleFiles.join('\0')}`,
      fsWriteShared: permissions?.fsWriteShared ?? [],
    };
    return new Sandbox(this.processOptions(undefined, forNode), targets, domain);
  }

  #poolOptions() {
    const {
      permissions,
      moduleFiles: _files,
      moduleSources: _sources,
      permissionSupport: _support,
      domainKey: _key,
      ...rest
    } = this.options;
    return { ...rest, execArgv: permissions ? permissionArgv(permissions, this.#ownReads(), this.#support) : [] };
  }

  /** What the workers must read to run at all: the worker entry, the tool modules and their packages. */
  #ownReads(): string[] {
    const { moduleFiles, moduleSources = moduleFiles } = this.options;
    const packageFolders = moduleSources.map(nearestNodeModules).filter((dir): dir is string => dir !== undefined);
    // Of the compile cache only toolpool's runtime and this domain's own modules: not what other modules compiled.
    return [compiledRuntimeDir(), ...workerEntryReadPaths(), dependencyRoot(), ...moduleFiles, ...packageFolders];
  }
}

/** Throws when the permissions cannot be enforced for tools of this isolation level on this Node line. */
export function checkIsolation(
  isolation: Isolation,
  permissions: Permissions | undefined,
  support?: PermissionSupport,
): void {
  if (!permissions) return;
  if (isolation === 'sandbox') {
    // A malformed 'host:port' list is refused now, not when the first sandbox starts.
    if (Array.isArray(permissions.net)) parseNetAllowlist(permissions.net);
    return checkSandboxPermissions(permissions);
  }
  const measured = support ?? permissionSupport();
  checkPermissionsHere(
    permissions,
    runsInProcess(isolation, permissions, () => measured) ? 'process' : 'worker',
    measured,
  );
}

/**
 * With permissions on a Node whose workers refuse the flags or are not
 * confined by them (22+ lets them read the working folder), the worker
 * tier is the process tier.
 */
function runsInProcess(
  isolation: Isolation,
  permissions: Permissions | undefined,
  support: () => PermissionSupport,
): boolean {
  if (isolation === 'process') return true;
  if (permissions === undefined) return false;
  // Asked only now: measuring the support starts a worker, which an executor without permissions never needs.
  const { perWorker, confinesWorkers } = support();
  return !perWorker || confinesWorkers === false;
}

/**
 * The sandbox enforces a net list itself; fsWrite must still not cover the
 * compile cache the host reuses, and under a root host the sandbox's user
 * (nobody) must be able to use what it is given.
 */
function checkSandboxPermissions(permissions: Permissions): void {
  refuseWritesOverCaches(permissions);
  const fsWrite = (permissions.fsWrite ?? []).map((path) => resolve(path));
  const unlisted = (permissions.fsWriteShared ?? []).find((path) => !fsWrite.includes(resolve(path)));
  if (unlisted !== undefined)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', SandboxErrors.sharedNotInFsWrite(unlisted));
  // Each module's own space is made for its uid by the host; what stays shared must let the sandbox's users in.
  const isShared = (path: string) =>
    (permissions.fsWriteShared ?? []).some((s) => resolve(s) === resolve(path)) || !isFolder(path);
  const shared = (permissions.fsWrite ?? []).filter(isShared);
  // An fsRead folder that is also a module's own fsWrite space shows that space, not the host's folder.
  const ownSpaces = new Set((permissions.fsWrite ?? []).filter((path) => !isShared(path)).map((path) => resolve(path)));
  const problem = sandboxAccessProblem(
    (permissions.fsRead ?? []).filter((path) => !ownSpaces.has(resolve(path))),
    shared,
  );
  if (problem !== undefined)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_SANDBOX_UNAVAILABLE', SandboxErrors.notAccessibleAsNobody(problem));
}

/**
 * What a later executor or `toolpool` command takes from toolpool's caches
 * (compiled modules, the CLI's V8 code cache) a tool must not write: no
 * fsWrite root may contain one of them or lie inside one.
 */
function refuseWritesOverCaches(permissions: Permissions): void {
  for (const folder of protectedFolders()) {
    const grant = writeRootOverlapping(permissions, folder);
    if (grant !== undefined)
      throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', PermissionErrors.writeOverlapsCache(grant, folder));
  }
}

/** Refuses what the tier cannot enforce on this line, rather than running tools less restricted than asked. */
function checkPermissionsHere(
  permissions: Permissions,
  tier: 'worker' | 'process',
  support = permissionSupport(),
): void {
  if (Array.isArray(permissions.net))
    throw new ToolpoolTypeError('TOOLPOOL_ERR_UNSUPPORTED', PermissionErrors.netListNeedsSandbox(tier));
  if (permissions.net === false && !support.net)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_UNSUPPORTED', PermissionErrors.netFalseNotEnforceable(process.version));
  refuseWritesOverCaches(permissions);
  checkGrantedLinks(permissions);
}

/** The permissions whose roots were walked for links (once per permissions object: the walk reads every folder). */
const linksChecked = new WeakSet<Permissions>();

/** Refuses a granted root holding a symbolic link that leads outside the roots (see linkLeavingRoots). */
function checkGrantedLinks(permissions: Permissions): void {
  if (linksChecked.has(permissions)) return;
  const found = linkLeavingRoots(permissions);
  if (found)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      PermissionErrors.linkLeavesRoots(found.link, found.target, found.option),
    );
  linksChecked.add(permissions);
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
