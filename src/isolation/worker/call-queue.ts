import type { PoolCall } from './pool-call.ts';

/** A first-in first-out list with O(1) push and shift, for the calls of one tool. */
class Fifo<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  peek(): T | undefined {
    return this.#items[this.#head];
  }

  push(item: T): void {
    this.#items.push(item);
  }

  unshift(item: T): void {
    if (this.#head > 0) this.#items[--this.#head] = item;
    else this.#items.unshift(item);
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Compact once the dead prefix dominates, so a long-lived queue does not grow without bound.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = this.#head; i < this.#items.length; i++) yield this.#items[i]!;
  }
}

/**
 * The calls of a pool that wait for a worker, one FIFO per tool. A worker
 * with nothing to do takes the oldest call of any tool; a worker already
 * running calls of a tool that allows sharing takes only that tool's next
 * call. Calls that ended while waiting (aborted) are skipped when met.
 */
export class CallQueue {
  readonly #byTool = new Map<string, Fifo<PoolCall>>();
  #sequence = 0;
  readonly #order = new WeakMap<PoolCall, number>();

  push(call: PoolCall): void {
    this.#order.set(call, this.#sequence++);
    this.#fifo(call.toolKey).push(call);
  }

  /** A call that was sent and never started goes back to the front of its tool's line. */
  pushFront(call: PoolCall): void {
    if (!this.#order.has(call)) this.#order.set(call, -1);
    this.#fifo(call.toolKey).unshift(call);
  }

  /** The oldest waiting call of any tool, taken off the queue. */
  takeOldest(): PoolCall | undefined {
    let oldest: Fifo<PoolCall> | undefined;
    let oldestOrder = Infinity;
    for (const fifo of this.#byTool.values()) {
      const head = this.#liveHead(fifo);
      if (head && this.#order.get(head)! < oldestOrder) {
        oldest = fifo;
        oldestOrder = this.#order.get(head)!;
      }
    }
    return oldest?.shift();
  }

  /** The next waiting call of this tool, taken off the queue. */
  takeOf(toolKey: string): PoolCall | undefined {
    const fifo = this.#byTool.get(toolKey);
    return fifo && this.#liveHead(fifo) ? fifo.shift() : undefined;
  }

  /** Whether a call of this tool waits. */
  has(toolKey: string): boolean {
    const fifo = this.#byTool.get(toolKey);
    return fifo !== undefined && this.#liveHead(fifo) !== undefined;
  }

  /** How many workers the waiting calls would fill, each tool's calls packed by its concurrency. */
  workersWanted(): number {
    let wanted = 0;
    for (const fifo of this.#byTool.values()) {
      const head = this.#liveHead(fifo);
      if (head) wanted += Math.ceil(fifo.size / head.concurrency);
    }
    return wanted;
  }

  get isEmpty(): boolean {
    for (const fifo of this.#byTool.values()) if (this.#liveHead(fifo)) return false;
    return true;
  }

  *[Symbol.iterator](): IterableIterator<PoolCall> {
    for (const fifo of this.#byTool.values()) for (const call of fifo) if (!call.outcome) yield call;
  }

  /** Drops calls that ended while waiting off the front. */
  #liveHead(fifo: Fifo<PoolCall>): PoolCall | undefined {
    while (fifo.size > 0 && fifo.peek()!.outcome) fifo.shift();
    return fifo.peek();
  }

  #fifo(toolKey: string): Fifo<PoolCall> {
    let fifo = this.#byTool.get(toolKey);
    if (!fifo) this.#byTool.set(toolKey, (fifo = new Fifo()));
    return fifo;
  }
}
