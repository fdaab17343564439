/**
 * Which calls a worker has started, without a message per start: the worker
 * writes the `seq` of each call it starts into one shared Int32 before the
 * tool's code runs, and the host reads it only when it must know (the worker
 * died, was retired or seems blocked: a call it never started goes to
 * another worker instead of failing). Calls start in the order they were
 * sent, so "seq ≤ counter" means started. Seqs wrap at 2^31, compared
 * modulo, which holds while fewer than 2^31 calls are outstanding.
 *
 * The buffer lives in the worker runtime's module scope and crossed only in
 * the hello, so tool code cannot find it (it is no handle, and the inspector
 * is refused). The host therefore also takes "not started" as proof that a
 * message about that call did not come from the runtime. Were a tool ever to
 * reach it, it could only lie about calls sent to its own worker (one it
 * never started would fail instead of running elsewhere, or one it started
 * would run once more elsewhere): nothing of the host or of another worker.
 */
export class StartCounter {
  readonly #counter: Int32Array;
  #lastSent = 0;

  private constructor(buffer: SharedArrayBuffer) {
    this.#counter = new Int32Array(buffer, 0, 1);
  }

  /** The counter a worker offered in its hello, or undefined when it is not one. */
  static from(value: unknown): StartCounter | undefined {
    if (!(value instanceof SharedArrayBuffer) || value.byteLength < 4) return undefined;
    return new StartCounter(value);
  }

  /** The seq of the next call sent. */
  next(): number {
    this.#lastSent = (this.#lastSent + 1) | 0 || 1;
    return this.#lastSent;
  }

  /** Whether the worker has started any call at all (seqs are never 0). */
  get anyStarted(): boolean {
    return Atomics.load(this.#counter, 0) !== 0;
  }

  hasStarted(seq: number): boolean {
    return ((Atomics.load(this.#counter, 0) - seq) | 0) >= 0;
  }
}
