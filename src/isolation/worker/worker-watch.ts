import type { WorkerChannel } from './worker-channel.ts';

/** What the watch looks at and may do in its pool. */
export interface WatchedPool {
  readonly channels: Iterable<WorkerChannel>;
  readonly hasWaiting: boolean;
  readonly untracked: number;
  readonly leaseCount: number;
  readonly oldestPendingLease: number;
  readonly releasing: number;
  releasesOverdue(now: number, boundMs: number): Iterable<WorkerChannel>;
  releaseIdle(now: number): void;
  /** Workers were retired for not taking a lease: the calls waiting for one count an attempt. */
  leaseStalled(): void;
}

const SWEEP_MS = 250;
/**
 * A worker that has not started the call it should be running this long
 * after, while it runs nothing else, is blocked (after its last call returned: a
 * `while (true)` in a microtask, `Atomics.wait`, a sync sleep). Generous,
 * because on a loaded machine (the full suite beside two busy processes) a
 * healthy worker's messages have lagged by seconds.
 */
const NOT_STARTED_MS = 5_000;
/** A lease piscina has not given to any worker this long, while workers look idle, means those workers are blocked. */
const STALLED_MS = 10_000;
/**
 * A worker that has not ended its lease this long after the host gave it
 * back is blocked (after its last call returned), and it still holds one of
 * the thread tokens every trust domain's pool shares: it is retired, so
 * another domain's call is not kept waiting for it.
 */
const RELEASE_BOUND_MS = 2_000;

/**
 * One sweep for the whole pool, only while there is something to watch, so
 * that no wait is unbounded: a worker blocked after its call returned is
 * retired, and the calls sent to it go to another worker; leases idle past
 * their linger are given back to piscina.
 */
export class WorkerWatch {
  #timer: NodeJS.Timeout | undefined;

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

  #sweep(): void {
    const now = Date.now();
    this.pool.releaseIdle(now);
    for (const channel of [...this.pool.releasesOverdue(now, RELEASE_BOUND_MS)])
      channel.retire('it did not give its lease back', false);
    let watching = this.pool.leaseCount > 0 || this.pool.oldestPendingLease > 0 || this.pool.releasing > 0;
    const idle: WorkerChannel[] = [];
    for (const channel of this.pool.channels) {
      if (channel.calls.size > 0) {
        watching = true;
        if (notStartedFor(channel, now) > NOT_STARTED_MS)
          channel.retireBlocked('it did not start the call it was sent');
      } else if (channel.lease === undefined && now - channel.idleSince > STALLED_MS) idle.push(channel);
    }
    if (this.pool.hasWaiting) watching = true;
    // Workers piscina would have given the waiting lease to, beyond those busy with a describe or prepare the host cannot see.
    const pending = this.pool.oldestPendingLease;
    if (pending > 0 && now - pending > STALLED_MS && idle.length > this.pool.untracked) {
      for (const channel of idle.slice(this.pool.untracked))
        channel.retire('it did not take the calls waiting for it', false);
      // Their replacements may get stuck the same way (importing a module that hangs): the waiting calls are not kept forever.
      this.pool.leaseStalled();
    }
    if (!watching) this.stop();
  }
}

/**
 * How long the calls this worker should be running have waited for it to
 * start them, when it has started none of its calls (0 otherwise).
 */
function notStartedFor(channel: WorkerChannel, now: number): number {
  let oldest = 0;
  for (const call of channel.calls.values()) {
    if (channel.hasStarted(call)) return 0;
    if (call.beganAt !== 0) oldest = Math.max(oldest, now - call.beganAt);
  }
  return oldest;
}
