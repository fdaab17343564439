import type { LinkedClient } from './connection.ts';

/** Cancels remembered for calls not running here yet, and for how long. */
const REMEMBERED = 10_000;
const REMEMBER_MS = 60_000;

/**
 * The queue's cancel channel, on a worker machine: a host publishes the job
 * id of a call to stop, and the machine running it aborts it (its
 * executor then kills a tool that ignores the signal). A cancel can arrive
 * before the job's processor starts here (the job was taken between the
 * host's failed removal and its publish): such ids are remembered for a
 * while, and a call that starts with one is aborted at once.
 */
export class CancelListener {
  readonly #running = new Map<string, AbortController>();
  readonly #early = new Map<string, number>();

  constructor(
    private readonly link: LinkedClient,
    private readonly channel: string,
  ) {
    link.redis.on('message', (from: string, jobId: string) => {
      if (from === this.channel) this.#cancel(jobId);
    });
  }

  /** Resolves once subscribed (after Redis is reachable: ioredis subscribes again by itself after a reconnect). */
  async listen(): Promise<void> {
    await this.link.redis.subscribe(this.channel);
  }

  /** The signal of a call that starts now; aborted already when a cancel for it came first. */
  track(jobId: string): AbortController {
    const controller = new AbortController();
    this.#running.set(jobId, controller);
    if (this.#early.delete(jobId)) controller.abort();
    return controller;
  }

  untrack(jobId: string): void {
    this.#running.delete(jobId);
  }

  /** Every call running here, for a shutdown. */
  abortAll(): void {
    for (const controller of this.#running.values()) controller.abort();
  }

  close(): void {
    this.link.close();
  }

  #cancel(jobId: string): void {
    const running = this.#running.get(jobId);
    if (running) return running.abort();
    const now = Date.now();
    for (const [id, at] of this.#early) {
      if (this.#early.size < REMEMBERED && now - at < REMEMBER_MS) break;
      this.#early.delete(id);
    }
    this.#early.set(jobId.slice(0, 512), now);
  }
}
