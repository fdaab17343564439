/**
 * One cap on the worker threads that run tool code at once, shared by the
 * pools of every trust domain of an executor: each module has its own pool
 * (no thread ever runs two modules' code), and without a shared cap ten
 * modules would mean ten times the CPU.
 *
 * A token is held by each worker while it runs calls (from the first call
 * sent to it until it has none) and by each task that reads a module
 * (describe, prepare, needsApproval). An idle worker holds none, so a
 * pool keeps its workers between calls and a token changes hands without
 * a trip through piscina. Tokens go to waiters first come, first served.
 */
export class ThreadBudget {
  #used = 0;
  readonly #waiters: Array<() => void> = [];

  constructor(readonly max: number) {}

  /** Takes a token now if one is free and nobody waits ahead; false otherwise. */
  take(): boolean {
    if (this.#used >= this.max || this.#waiters.length > 0) return false;
    this.#used++;
    return true;
  }

  /**
   * Queues for a token: `onToken` is called once with the token already
   * taken (give it back with `give()`). Returns a function that leaves the
   * queue (if the token has not been handed over yet).
   */
  wait(onToken: () => void): () => void {
    this.#waiters.push(onToken);
    return () => {
      const index = this.#waiters.indexOf(onToken);
      if (index >= 0) this.#waiters.splice(index, 1);
    };
  }

  /** A token as a promise, for one task; rejects with `signal`'s reason when it aborts first. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (this.take()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const leave = this.wait(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = () => {
        leave();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Gives a token back: to the first waiter, or to the pool. */
  give(): void {
    const next = this.#waiters.shift();
    if (next) return next();
    this.#used--;
  }

  get contended(): boolean {
    return this.#waiters.length > 0;
  }
}
