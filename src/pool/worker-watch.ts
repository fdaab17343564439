import type { PoolCall } from './pool-call.ts';
import type { WorkerChannel } from './worker-channel.ts';

/** What the watch looks at and may do in its pool. */
export interface WatchedPool {
  readonly channels: Iterable<WorkerChannel>;
  readonly queued: Iterable<PoolCall>;
  readonly untracked: number;
  requeue(call: PoolCall, why: string): void;
}

const SWEEP_MS = 250;
/**
 * A worker whose task piscina has not seen finish this long after its
 * result is blocked after return. Generous, because on a loaded machine
 * (the full suite beside two busy processes) a healthy worker's task end
 * has lagged its result by seconds, and 2 s retired healthy workers.
 */
const BLOCKED_AFTER_RESULT_MS = 5_000;
/** A worker that looks idle this long while calls wait is presumed blocked (piscina would have given it one). */
const STALLED_MS = 10_000;
/** A task piscina saw done without its start on any channel is requeued after this long. */
const UNEXPLAINED_MS = 2_000;

/**
 * One sweep for the whole pool, only while there is something to watch, so
 * that no wait is unbounded: a worker blocked after its call returned (a
 * `while (true)` in a microtask, `Atomics.wait`, a sync sleep) is retired,
 * and the calls queued behind it go to another worker.
 */
export class WorkerWatch {
  #timer: NodeJS.Timeout | undefined;
  readonly #unexplained = new Map<PoolCall, number>();

  constructor(private readonly pool: WatchedPool) {}

  wake(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#sweep(), SWEEP_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  unexplained(call: PoolCall): void {
    this.#unexplained.set(call, Date.now());
    this.wake();
  }

  #sweep(): void {
    const now = Date.now();
    let watching = this.#unexplained.size > 0;
    for (const [call, since] of this.#unexplained) {
      if (call.started || call.outcome) this.#unexplained.delete(call);
      else if (now - since > UNEXPLAINED_MS) {
        this.#unexplained.delete(call);
        this.pool.requeue(call, 'its task ended before it started');
      }
    }
    const oldestQueued = this.#oldestQueued(now);
    if (oldestQueued > 0) watching = true;
    let idle: WorkerChannel[] = [];
    for (const channel of this.pool.channels) {
      if (this.#blockedAfterResult(channel, now)) {
        channel.retire('it stayed blocked after its call returned', false);
        continue;
      }
      if (channel.running.size > 0 || lastFinished.get(channel)?.taskDone === false) watching = true;
      else if (now - channel.idleSince > STALLED_MS) idle.push(channel);
    }
    // Idle-looking workers beyond those busy with a describe or prepare the host cannot see.
    if (oldestQueued > STALLED_MS && idle.length > this.pool.untracked) {
      idle = idle.slice(this.pool.untracked);
      for (const channel of idle) channel.retire('it did not take the calls waiting for it', false);
    }
    if (!watching) this.stop();
  }

  #blockedAfterResult(channel: WorkerChannel, now: number): boolean {
    const last = lastFinished.get(channel);
    return last !== undefined && !last.taskDone && last.resultAt !== 0 && now - last.resultAt > BLOCKED_AFTER_RESULT_MS;
  }

  #oldestQueued(now: number): number {
    let oldest = 0;
    for (const call of this.pool.queued) if (!call.outcome && call.queuedAt) oldest = Math.max(oldest, now - call.queuedAt);
    return oldest;
  }
}

/** The last call each channel finished, for the blocked-after-result check. */
export const lastFinished = new WeakMap<WorkerChannel, PoolCall>();
