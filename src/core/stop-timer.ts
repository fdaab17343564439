import { deadlines, type Due } from './deadline-sweep.ts';
import type { ResolvedLimits } from './limits.ts';

export type StopReason = 'timeout' | 'aborted';
export type StopHow = 'cooperative' | 'killed' | 'unstoppable' | 'before-start';

/** What a runner gives the stop timer: how to see, ask, cancel and kill its call. */
export interface Stoppable {
  readonly limits: Pick<ResolvedLimits, 'timeoutMs' | 'abortGraceMs'>;
  /** Epoch ms at which the tool started running; 0 while it waits in a queue (the runner calls the timer's `recheck()` when it starts). */
  startedAt(): number;
  /** For a runner that counts a call started before its worker confirms it: whether the worker has. A timeout waits for it. */
  confirmedStarted?(): boolean;
  /** A call still waiting in a queue is simply dropped: returns true when that worked. */
  cancelIfQueued(): boolean;
  /** Step one: fire the tool's own `ctx.signal`. */
  requestStop(reason: StopReason): void;
  /** Step two, after the grace period: stop it for good. */
  kill(): void;
}

/** A call found not started at its deadline is looked at again this often. */
const NOT_STARTED_RECHECK_MS = 50;

/**
 * The two-step stop shared by every runner: a timeout (counted from the
 * moment the tool started, not from queueing) or the caller's abort first
 * fires the tool's signal, then kills it if it is still running when the
 * grace period ends. `stopped` records which step ended the call.
 *
 * It runs once per call on the hot path, so it makes no timer and no
 * closure: both deadlines go to the thread's one sweep (deadline-sweep.ts),
 * and the abort listener is the instance itself. A call that has not started
 * when the timer is made gets its deadline when its runner calls `recheck()`.
 */
export class StopTimer implements Due {
  stopped: { reason: StopReason; how: StopHow } | undefined;

  constructor(
    private readonly call: Stoppable,
    private readonly signal?: AbortSignal,
  ) {
    this.recheck();
    signal?.addEventListener('abort', this, { once: true });
  }

  /** The abort listener (an EventListener object, so no closure is made). */
  handleEvent(): void {
    this.stop('aborted');
  }

  dispose(): void {
    deadlines.cancel(this);
    this.signal?.removeEventListener('abort', this);
  }

  /** The call started, or its start moved (its module finished importing): the deadline is computed again. */
  recheck(): void {
    if (this.stopped) return;
    const started = this.call.startedAt();
    if (started === 0) return deadlines.cancel(this);
    deadlines.at(this, started + this.call.limits.timeoutMs);
  }

  /** The sweep's call: the timeout, or the end of the grace period after a stop. */
  due(): void {
    if (this.stopped) return this.killAfterGrace();
    const started = this.call.startedAt();
    // The start may have moved since the deadline was set.
    if (started === 0 || started + this.call.limits.timeoutMs > Date.now()) return this.recheck();
    // Counted as started, but its worker has not confirmed it: looked at again shortly.
    if (this.call.confirmedStarted?.() === false) return deadlines.at(this, Date.now() + NOT_STARTED_RECHECK_MS);
    // Confirming the start may have moved it (the worker started the call late): the deadline is computed again.
    if (this.call.startedAt() + this.call.limits.timeoutMs > Date.now()) return this.recheck();
    this.stop('timeout');
  }

  stop(reason: StopReason): void {
    if (this.stopped) return;
    deadlines.cancel(this);
    if (this.call.cancelIfQueued()) {
      this.stopped = { reason, how: 'before-start' };
      return;
    }
    this.stopped = { reason, how: 'cooperative' };
    this.call.requestStop(reason);
    deadlines.at(this, Date.now() + this.call.limits.abortGraceMs);
  }

  killAfterGrace(): void {
    if (!this.stopped || this.stopped.how === 'killed') return;
    this.stopped = { reason: this.stopped.reason, how: 'killed' };
    this.call.kill();
  }
}

/** The reason a tool's `ctx.signal` carries: a DOMException named for what happened. */
export function stopError(reason: StopReason): DOMException {
  return reason === 'timeout'
    ? new DOMException('The tool call timed out', 'TimeoutError')
    : new DOMException('The tool call was aborted', 'AbortError');
}
