import type { ResolvedLimits } from './limits.ts';

export type StopReason = 'timeout' | 'aborted';
export type StopHow = 'cooperative' | 'killed' | 'before-start';

/** What a runner gives the stop timer: how to see, ask, cancel and kill its call. */
export interface Stoppable {
  readonly limits: Pick<ResolvedLimits, 'timeoutMs' | 'abortGraceMs'>;
  /** Epoch ms at which the tool started running; 0 while it waits in a queue. */
  startedAt(): number;
  /** A call still waiting in a queue is simply dropped: returns true when that worked. */
  cancelIfQueued(): boolean;
  /** Step one: fire the tool's own `ctx.signal`. */
  requestStop(reason: StopReason): void;
  /** Step two, after the grace period: stop it for good. */
  kill(): void;
}

/** While a queued call has not started, how often to look whether it has. */
const START_POLL_MS = 25;

/**
 * The two-step stop shared by every runner: a timeout (counted from the
 * moment the tool started, not from queueing) or the caller's abort first
 * fires the tool's signal, then kills it if it is still running when the
 * grace period ends. `stopped` records which step ended the call.
 *
 * It runs once per call on the hot path, so it allocates no closures: the
 * timers get the instance as their argument.
 */
export class StopTimer {
  stopped: { reason: StopReason; how: StopHow } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #graceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly call: Stoppable,
    private readonly signal?: AbortSignal,
  ) {
    this.#timer = setTimeout(checkTimeout, call.limits.timeoutMs, this);
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The abort listener (an EventListener object, so no closure is made). */
  handleEvent(): void {
    this.stop('aborted');
  }

  dispose(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#graceTimer);
    this.signal?.removeEventListener('abort', this);
  }

  /** The call's start moved (its module finished importing): the deadline is computed again. */
  recheck(): void {
    if (this.stopped) return;
    clearTimeout(this.#timer);
    this.checkTimeout();
  }

  checkTimeout(): void {
    const { timeoutMs } = this.call.limits;
    const started = this.call.startedAt();
    if (started === 0) {
      this.#timer = setTimeout(checkTimeout, Math.min(START_POLL_MS, timeoutMs), this);
      return;
    }
    const remaining = started + timeoutMs - Date.now();
    if (remaining > 0) this.#timer = setTimeout(checkTimeout, remaining, this);
    else this.stop('timeout');
  }

  stop(reason: StopReason): void {
    if (this.stopped) return;
    clearTimeout(this.#timer);
    if (this.call.cancelIfQueued()) {
      this.stopped = { reason, how: 'before-start' };
      return;
    }
    this.stopped = { reason, how: 'cooperative' };
    this.call.requestStop(reason);
    this.#graceTimer = setTimeout(killAfterGrace, this.call.limits.abortGraceMs, this);
  }

  killAfterGrace(): void {
    if (!this.stopped) return;
    this.stopped = { reason: this.stopped.reason, how: 'killed' };
    this.call.kill();
  }
}

function checkTimeout(timer: StopTimer): void {
  timer.checkTimeout();
}

function killAfterGrace(timer: StopTimer): void {
  timer.killAfterGrace();
}

/** The reason a tool's `ctx.signal` carries: a DOMException named for what happened. */
export function stopError(reason: StopReason): DOMException {
  return reason === 'timeout'
    ? new DOMException('The tool call timed out', 'TimeoutError')
    : new DOMException('The tool call was aborted', 'AbortError');
}
