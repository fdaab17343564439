import { COMPILE_CACHE_DIR } from '../pool/module-compiler.ts';
import { PoolSet } from '../pool/pool-set.ts';
import { workerEntryReadPaths } from '../pool/worker-pool.ts';
import type { HostFunctions, Isolation } from '../tool.ts';
import { dependencyRoot, nearestNodeModules, permissionArgv, type Permissions } from './permissions.ts';
import type { ChildLauncher } from './child-launcher.ts';
import { ProcessTier, type ProcessTierOptions } from './process-tier.ts';
import { parseNetAllowlist } from './sandbox/net-allowlist.ts';
import { SandboxTier } from './sandbox/sandbox-tier.ts';
import type { ToolTier } from './tier.ts';

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
  /** The runnable tool module files, so permission-restricted workers may load them. */
  moduleFiles: string[];
}

/** The isolation tiers of one executor, each started on first use. */
export class Tiers {
  #worker: PoolSet | undefined;
  #process: ProcessTier | undefined;
  #sandbox: SandboxTier | undefined;

  constructor(private readonly options: TierOptions) {}

  get(isolation: Isolation): ToolTier {
    if (isolation === 'process') return (this.#process ??= new ProcessTier(this.processOptions()));
    if (isolation === 'sandbox') return this.#sandboxTier();
    return (this.#worker ??= new PoolSet(this.#poolOptions()));
  }

  /** Options of a process tier; a launcher other than the default one (bwrap) makes another tier of the same kind. */
  processOptions(launcher?: ChildLauncher): ProcessTierOptions {
    const { permissions, moduleFiles } = this.options;
    return {
      ...this.#poolOptions(),
      ...(launcher ? { launcher } : {}),
      readPaths: [...this.#ownReads(moduleFiles), ...(permissions?.fsRead ?? [])],
      writePaths: [...(permissions?.fsWrite ?? [])],
    };
  }

  /** Settles once the tiers in use can run: rejects when the sandbox tier is asked for and bubblewrap cannot start. */
  async ready(isolation: Isolation): Promise<void> {
    if (isolation === 'sandbox') this.#sandboxTier();
    await this.#sandbox?.ready;
  }

  async close(): Promise<void> {
    await Promise.all([this.#worker?.close(), this.#process?.close(), this.#sandbox?.close()]);
  }

  #sandboxTier(): SandboxTier {
    const net = this.options.permissions?.net;
    const targets = Array.isArray(net) ? parseNetAllowlist(net) : [];
    return (this.#sandbox ??= new SandboxTier(withNetFlag(this.processOptions(), targets.length > 0), targets));
  }

  #poolOptions() {
    const { permissions, moduleFiles, ...rest } = this.options;
    return { ...rest, execArgv: permissions ? permissionArgv(permissions, this.#ownReads(moduleFiles)) : [] };
  }

  /** What the workers must read to run at all: the worker entry, the tool modules and their packages. */
  #ownReads(moduleFiles: string[]): string[] {
    const packageFolders = moduleFiles.map(nearestNodeModules).filter((dir): dir is string => dir !== undefined);
    return [COMPILE_CACHE_DIR, ...workerEntryReadPaths(), dependencyRoot(), ...moduleFiles, ...packageFolders];
  }
}

/**
 * Node 25+ denies the network under its permission model unless told
 * otherwise; a sandbox with a net list must let its forwarders and tools
 * reach the forwarders' loopback ports (the namespace and the host-side
 * proxy are what restrict the network there).
 */
function withNetFlag(options: ProcessTierOptions, net: boolean): ProcessTierOptions {
  if (!net || !options.execArgv.length || !process.allowedNodeEnvironmentFlags.has('--allow-net')) return options;
  return { ...options, execArgv: [...options.execArgv, '--allow-net'], ...(options.childFlags?.length ? { childFlags: [...options.childFlags, '--allow-net'] } : {}) };
}
