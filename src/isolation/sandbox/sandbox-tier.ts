import type { ModuleTask } from '../worker/protocol.ts';
import type { RunJob, RunOutcome } from '../../core/runner.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import { ProcessTier, type ProcessTierOptions } from '../process/process-tier.ts';
import type { PrepareLimits, ToolTier } from '../../core/tier.ts';
import { checkSandboxSupport } from './bwrap-support.ts';
import type { NetTarget } from './net-allowlist.ts';
import { SandboxLauncher, type SandboxDomain } from './sandbox-launcher.ts';

/**
 * The sandbox tier: the process tier, with its child started inside
 * bubblewrap. Everything about calls (reuse, respawn after a death, host
 * functions, limits) is the process tier's; this adds the check that
 * bubblewrap works here, done once before the first child starts, and the
 * network proxy's lifetime.
 */
export class SandboxTier implements ToolTier {
  /** Settles when bwrap was found and a probe sandbox started; rejects with what to install otherwise. */
  readonly ready: Promise<void>;
  readonly #tier: Promise<{ tier: ProcessTier; launcher: SandboxLauncher }>;

  constructor(options: ProcessTierOptions, targets: readonly NetTarget[], domain?: SandboxDomain) {
    this.#tier = checkSandboxSupport().then((bwrap) => {
      const launcher = new SandboxLauncher(bwrap, targets, domain);
      return { tier: new ProcessTier({ ...options, launcher }), launcher };
    });
    this.ready = this.#tier.then(() => undefined);
    this.ready.catch(() => undefined); // observed by whoever calls; never an unhandled rejection
  }

  async describe(ref: ModuleTask): Promise<DefinitionView> {
    return (await this.#tier).tier.describe(ref);
  }

  async prepare(
    ref: ModuleTask,
    raw: Record<string, unknown>,
    limits: PrepareLimits,
  ): Promise<Record<string, unknown>> {
    return (await this.#tier).tier.prepare(ref, raw, limits);
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    return (await this.#tier).tier.needsApproval(ref, args, limits);
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    let tier: ProcessTier;
    try {
      tier = (await this.#tier).tier;
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
    return tier.execute(job, ref);
  }

  async close(): Promise<void> {
    const started = await this.#tier.catch(() => undefined);
    if (!started) return;
    await started.tier.close();
    await started.launcher.close();
  }
}
