import type { ResolvedLimits } from './limits.ts';

export type StopReason = 'timeout' | 'aborted';
export type StopHow = 'cooperative' | 'killed' | 'before-start';

export interface StopTimerOptions {
  limits: Pick<ResolvedLimits, 'timeoutMs' | 'abortGraceMs'>;
  /** Epoch ms at which the tool started running; 0 while it waits in a queue. */
  startedAt: () => number;
  /** Step one: fire the tool's own `ctx.signal`. */
  requestStop: (reason: StopReason) => void;
  /** Step two, after the grace period (or at once if it never started): stop it for good. */
  kill: () => void;
  signal?: AbortSignal;
}

/** While a queued call has not started, how often to look whether it has. */
const START_POLL_MS = 25;

/**
 * The two-step stop shared by every runner: a timeout (counted from the
 * moment the tool started, not from queueing) or the caller's abort first
 * fires the tool's signal, then kills it if it is still running when the
 * grace period ends. `stopped` records which step ended the call.
 */
export class StopTimer {
  stopped: { reason: StopReason; how: StopHow } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;
  readonly #onAbort = () => this.#stop('aborted');

  constructor(private readonly options: StopTimerOptions) {
    this.#timer = setTimeout(() => this.#checkTimeout(), options.limits.timeoutMs);
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  dispose(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#graceTimer);
    this.options.signal?.removeEventListener('abort', this.#onAbort);
  }

  #checkTimeout(): void {
    const started = this.options.startedAt();
    if (started === 0) {
      this.#timer = setTimeout(() => this.#checkTimeout(), Math.min(START_POLL_MS, this.options.limits.timeoutMs));
      return;
    }
    const remaining = started + this.options.limits.timeoutMs - Date.now();
    if (remaining > 0) this.#timer = setTimeout(() => this.#checkTimeout(), remaining);
    else this.#stop('timeout');
  }

  #stop(reason: StopReason): void {
    if (this.stopped) return;
    clearTimeout(this.#timer);
    if (this.options.startedAt() === 0) {
      this.stopped = { reason, how: 'before-start' };
      this.options.kill();
      return;
    }
    this.stopped = { reason, how: 'cooperative' };
    this.options.requestStop(reason);
    this.#graceTimer = setTimeout(() => {
      this.stopped = { reason, how: 'killed' };
      this.options.kill();
    }, this.options.limits.abortGraceMs);
  }
}

/** The reason a tool's `ctx.signal` carries: a DOMException named for what happened. */
export function stopError(reason: StopReason): DOMException {
  return reason === 'timeout'
    ? new DOMException('The tool call timed out', 'TimeoutError')
    : new DOMException('The tool call was aborted', 'AbortError');
}
