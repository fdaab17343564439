import { COMPILE_CACHE_DIR } from '../pool/module-compiler.ts';
import { PoolSet } from '../pool/pool-set.ts';
import { workerEntryReadPaths } from '../pool/worker-pool.ts';
import type { HostFunctions, Isolation } from '../tool.ts';
import { dependencyRoot, nearestNodeModules, permissionArgv, type Permissions } from './permissions.ts';
import type { ChildLauncher } from './child-launcher.ts';
import { ProcessTier, type ProcessTierOptions } from './process-tier.ts';
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

  constructor(private readonly options: TierOptions) {}

  get(isolation: Isolation): ToolTier {
    if (isolation === 'process') return (this.#process ??= new ProcessTier(this.processOptions()));
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

  async close(): Promise<void> {
    await Promise.all([this.#worker?.close(), this.#process?.close()]);
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
