import { ToolErrors, errorMessage } from '../core/errors.ts';
import { holdEsbuild } from '../tools/esbuild-service.ts';
import { ThreadBudget } from './worker/thread-budget.ts';
import { keepInspectorClosed } from './common/inspector-guard.ts';
import { checkIsolation, Tiers, type TierOptions } from './tiers.ts';
import type { ModuleTask, PrepareLimits, ToolTier } from '../core/tier.ts';
import type { RunJob, RunOutcome } from '../core/runner.ts';
import type { DefinitionView } from '../core/tool-view.ts';
import type { Isolation } from '../core/tool.ts';
import { ToolpoolError } from '../core/error-codes.ts';

export type DomainOptions = Omit<TierOptions, 'moduleFiles' | 'moduleSources' | 'budget' | 'domainKey'>;

/** How often idle domains are looked for, at most; sooner when idleTimeoutMs is short. */
const REAP_SWEEP_MS = 1_000;

/**
 * The trust domains of one executor: one per tool module (or per
 * `trustDomain` name the host gave several modules). Each domain has tiers
 * of its own (its worker pools, its child processes, its sandboxes), so no
 * thread or process ever runs code of two domains. The domains share one
 * cap on threads; each starts on first use and is stopped again when none
 * of its tools ran for `idleTimeoutMs`. In the worker tier this keeps one
 * module's realm from another's (fault isolation), not a deliberate attacker:
 * threads share the host's process, whose memory any of them can read
 * (`/proc/self/mem`). Domains are walls only in the process tier with
 * `permissions` and in the sandbox.
 */
export class TrustDomains {
  readonly #domains = new Map<string, Domain>();
  readonly #budget: ThreadBudget;
  #sweep: NodeJS.Timeout | undefined;
  /** Lets go of esbuild's service (the host's module compiler) once this executor's domains are closed. */
  readonly #releaseEsbuild = holdEsbuild();

  constructor(private readonly options: DomainOptions) {
    this.#budget = new ThreadBudget(options.maxWorkers);
    // Tool code of every tier can signal this process (worker threads share it; children know process.ppid).
    keepInspectorClosed();
  }

  /** Throws when the permissions cannot be enforced for tools of this isolation level on this Node line. */
  check(isolation: Isolation): void {
    checkIsolation(isolation, this.options.permissions, this.options.permissionSupport);
  }

  /** Settles once the tier can run: rejects when the sandbox tier is asked for and bubblewrap cannot start. */
  async ready(isolation: Isolation): Promise<void> {
    if (isolation === 'sandbox') await (await import('./sandbox/bwrap-support.ts')).checkSandboxSupport();
  }

  /**
   * The domain named `key`, whose modules are `modules`: their runnable
   * files and their sources (what its workers may read under permissions,
   * and nothing of other domains).
   */
  domain(key: string, modules: { files: readonly string[]; sources: readonly string[] }): Domain {
    let domain = this.#domains.get(key);
    if (!domain) {
      domain = new Domain(
        {
          ...this.options,
          moduleFiles: [...modules.files],
          moduleSources: [...modules.sources],
          budget: this.#budget,
          domainKey: key,
        },
        () => this.#watchIdle(),
      );
      this.#domains.set(key, domain);
    }
    return domain;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    try {
      await Promise.all([...this.#domains.values()].map((domain) => domain.close()));
    } finally {
      this.#releaseEsbuild();
    }
  }

  /** Starts the idle sweep while any domain has something running; it stops itself once all are stopped. */
  #watchIdle(): void {
    if (this.#sweep) return;
    const every = Math.max(50, Math.min(REAP_SWEEP_MS, this.options.idleTimeoutMs / 2));
    this.#sweep = setInterval(() => {
      const now = performance.now();
      let live = false;
      for (const domain of this.#domains.values()) live = domain.reapIfIdle(now, this.options.idleTimeoutMs) || live;
      if (!live) {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
      }
    }, every);
    this.#sweep.unref();
  }
}

/**
 * One trust domain: the tiers its modules run in, started on first use and
 * stopped when idle. Every operation is counted while it runs, so a domain
 * is never stopped under a call.
 */
export class Domain {
  #tiers: Tiers | undefined;
  #running = 0;
  #lastUsed = 0;
  #closed = false;

  constructor(
    private readonly options: TierOptions,
    private readonly started: () => void,
  ) {}

  // Async functions that await, so a failure's stack still shows who asked (the registry, a batch).

  async describe(ref: ModuleTask, isolation: Isolation): Promise<DefinitionView> {
    return await this.#await(isolation, (tier) => tier.describe(ref));
  }

  async prepare(
    ref: ModuleTask,
    isolation: Isolation,
    raw: Record<string, unknown>,
    limits: PrepareLimits,
    signal?: AbortSignal,
  ) {
    return await this.#await(isolation, (tier) => tier.prepare(ref, raw, limits, signal));
  }

  async needsApproval(
    ref: ModuleTask,
    isolation: Isolation,
    args: Record<string, unknown>,
    limits: PrepareLimits,
  ): Promise<unknown> {
    return await this.#await(isolation, (tier) => tier.needsApproval(ref, args, limits));
  }

  /** Not async: the hot path of every call pays no extra promise here. */
  execute(job: RunJob, ref: ModuleTask, isolation: Isolation): Promise<RunOutcome> {
    return this.#use(isolation, (tier) => tier.execute(job, ref));
  }

  /** Stops this domain's tiers when nothing ran for `idleMs`; returns whether it is still running. */
  reapIfIdle(now: number, idleMs: number): boolean {
    if (!this.#tiers) return false;
    if (this.#running > 0 || now - this.#lastUsed < idleMs) return true;
    const tiers = this.#tiers;
    this.#tiers = undefined;
    void tiers.close();
    return false;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const tiers = this.#tiers;
    this.#tiers = undefined;
    await tiers?.close();
  }

  /**
   * The tier to run on now, started if this domain was idle (or never used):
   * a promise only while the process or sandbox tier's code first loads.
   */
  #tier(isolation: Isolation): ToolTier | Promise<ToolTier> {
    if (this.#closed) throw new ToolpoolError('TOOLPOOL_ERR_CLOSED', ToolErrors.poolClosed());
    if (!this.#tiers) {
      this.#tiers = new Tiers(this.options);
      this.started();
    }
    return this.#tiers.get(isolation);
  }

  /** One operation, counted while it runs; a promise with one reaction, so async stack traces see through it. */
  async #await<T>(isolation: Isolation, run: (tier: ToolTier) => Promise<T>): Promise<T> {
    const tier = this.#tier(isolation);
    // Counted before the tier may load, so the domain is not stopped meanwhile.
    this.#running++;
    try {
      return await run(await tier);
    } finally {
      this.#leave();
    }
  }

  /** The same for a call, without the extra promise of an async function (outcomes never reject). */
  #use(isolation: Isolation, run: (tier: ToolTier) => Promise<RunOutcome>): Promise<RunOutcome> {
    let done: Promise<RunOutcome>;
    try {
      const tier = this.#tier(isolation);
      done = tier instanceof Promise ? tier.then(run).catch(failedOutcome) : run(tier);
    } catch (error) {
      return Promise.resolve(failedOutcome(error));
    }
    this.#running++;
    done.then(this.#leave, this.#leave);
    return done;
  }

  readonly #leave = () => {
    this.#running--;
    this.#lastUsed = performance.now();
  };
}

const failedOutcome = (error: unknown): RunOutcome => ({ ok: false, error: errorMessage(error) });
