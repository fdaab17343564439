import type { RunJob, RunOutcome } from '../../core/runner.ts';
import type { ModuleTask, PrepareLimits, ToolTier } from '../../core/tier.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import { ToolProcess, type ProcessTierOptions } from './tool-process.ts';

export type { ProcessTierOptions };

/**
 * Runs module tools in worker threads of a child Node process, one child
 * per memory limit, started on first use and reused. The child has a clean
 * environment, no inherited descriptors, a cap on its whole data segment
 * (Buffers included) and on its descriptors, a PID namespace of its own
 * where bubblewrap works, and, with permissions, the permission flags on
 * its own main thread too. So a tool that kills its process, exhausts
 * memory or crashes natively takes down only the child; the calls running
 * there get error results and the next call starts a fresh child.
 */
export class ProcessTier implements ToolTier {
  readonly #children = new Map<number, ToolProcess>();

  constructor(private readonly options: ProcessTierOptions) {}

  describe(ref: ModuleTask): Promise<DefinitionView> {
    return this.#child(this.options.defaultMemoryMb).describe(ref);
  }

  prepare(ref: ModuleTask, raw: Record<string, unknown>, limits: PrepareLimits): Promise<Record<string, unknown>> {
    return this.#child(limits.maxMemoryMb).prepare(ref, raw, limits);
  }

  needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    return this.#child(limits.maxMemoryMb).needsApproval(ref, args, limits);
  }

  execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    return this.#child(job.limits.maxMemoryMb).execute(job, ref);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#children.values()].map((child) => child.close()));
    this.#children.clear();
  }

  #child(maxMemoryMb: number): ToolProcess {
    let child = this.#children.get(maxMemoryMb);
    if (!child) {
      child = new ToolProcess(this.options, maxMemoryMb);
      this.#children.set(maxMemoryMb, child);
    }
    return child;
  }
}
