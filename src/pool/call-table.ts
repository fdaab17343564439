/**
 * Per-call state shared between the host and its workers through shared
 * memory, so the hot path sends no extra messages: the worker stamps when a
 * call really started (timeouts count from there, not from queueing) and on
 * which thread (a hard kill terminates exactly that one); the host counts
 * the updates it has consumed (the worker's flow control) and can cancel a
 * call that has not started yet.
 */
export interface CallTableMemory {
  startedAt: SharedArrayBuffer;
  state: SharedArrayBuffer;
}

// Int32 fields per slot in `state`.
const CONSUMED = 0;
const THREAD_ID = 1;
const CANCELLED = 2;
const FIELDS = 3;

export class CallTable {
  readonly #startedAt: BigInt64Array;
  readonly #state: Int32Array;
  readonly #free: number[] = [];
  readonly #waiting: Array<(slot: number) => void> = [];

  constructor(readonly memory: CallTableMemory) {
    this.#startedAt = new BigInt64Array(memory.startedAt);
    this.#state = new Int32Array(memory.state);
  }

  static create(capacity: number): CallTable {
    const table = new CallTable({
      startedAt: new SharedArrayBuffer(capacity * BigInt64Array.BYTES_PER_ELEMENT),
      state: new SharedArrayBuffer(capacity * FIELDS * Int32Array.BYTES_PER_ELEMENT),
    });
    for (let slot = capacity - 1; slot >= 0; slot--) table.#free.push(slot);
    return table;
  }

  // Host side.

  /** A free slot, reset; waits when every slot is taken (more calls in flight than the table holds). */
  acquire(): number | Promise<number> {
    const slot = this.#free.pop();
    if (slot === undefined) return new Promise((resolve) => this.#waiting.push(resolve));
    this.#reset(slot);
    return slot;
  }

  release(slot: number): void {
    const next = this.#waiting.shift();
    if (next) {
      this.#reset(slot);
      next(slot);
    } else {
      this.#free.push(slot);
    }
  }

  /** Epoch milliseconds at which the worker started the call, or 0 when it has not started yet. */
  startedAt(slot: number): number {
    return Number(Atomics.load(this.#startedAt, slot));
  }

  /** The worker thread running the call (valid once started). */
  threadId(slot: number): number {
    return Atomics.load(this.#state, slot * FIELDS + THREAD_ID);
  }

  markConsumed(slot: number): void {
    Atomics.add(this.#state, slot * FIELDS + CONSUMED, 1);
  }

  /**
   * Cancels a call that has not started; returns false when a worker already
   * took it (then it must be stopped like a running call).
   */
  cancelBeforeStart(slot: number): boolean {
    return Atomics.compareExchange(this.#state, slot * FIELDS + CANCELLED, 0, 1) === 0;
  }

  #reset(slot: number): void {
    Atomics.store(this.#startedAt, slot, 0n);
    this.#state.fill(0, slot * FIELDS, slot * FIELDS + FIELDS);
  }

  // Worker side.

  /** Claims the call for this thread; false when the host cancelled it first. */
  start(slot: number, threadId: number): boolean {
    if (Atomics.compareExchange(this.#state, slot * FIELDS + CANCELLED, 0, 2) !== 0) return false;
    Atomics.store(this.#state, slot * FIELDS + THREAD_ID, threadId);
    Atomics.store(this.#startedAt, slot, BigInt(Date.now()));
    return true;
  }

  consumed(slot: number): number {
    return Atomics.load(this.#state, slot * FIELDS + CONSUMED);
  }
}
