/**
 * Per-call state shared between the host and its workers through shared
 * memory, so the hot path sends no extra messages: the worker stamps when a
 * call really started (timeouts count from there, not from queueing) and the
 * host counts the updates it has consumed (the worker's flow control).
 */
export interface CallTableMemory {
  startedAt: SharedArrayBuffer;
  consumed: SharedArrayBuffer;
}

export class CallTable {
  readonly #startedAt: BigInt64Array;
  readonly #consumed: Int32Array;
  readonly #free: number[] = [];
  readonly #waiting: Array<(slot: number) => void> = [];

  constructor(readonly memory: CallTableMemory) {
    this.#startedAt = new BigInt64Array(memory.startedAt);
    this.#consumed = new Int32Array(memory.consumed);
  }

  static create(capacity: number): CallTable {
    const table = new CallTable({
      startedAt: new SharedArrayBuffer(capacity * BigInt64Array.BYTES_PER_ELEMENT),
      consumed: new SharedArrayBuffer(capacity * Int32Array.BYTES_PER_ELEMENT),
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

  markConsumed(slot: number): void {
    Atomics.add(this.#consumed, slot, 1);
  }

  #reset(slot: number): void {
    Atomics.store(this.#startedAt, slot, 0n);
    Atomics.store(this.#consumed, slot, 0);
  }

  // Worker side.

  markStarted(slot: number): void {
    Atomics.store(this.#startedAt, slot, BigInt(Date.now()));
  }

  consumed(slot: number): number {
    return Atomics.load(this.#consumed, slot);
  }
}
