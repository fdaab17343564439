import type { UserMessage } from '../core/messages.ts';

/** How a queue of steering or follow-up messages is drained: one per turn, or all at once (pi-agent-core's modes). */
export type QueueMode = 'one-at-a-time' | 'all';

/** Messages waiting for the loop to take them; `take()` hands out one or all, by mode. */
export class MessageQueue {
  readonly #messages: UserMessage[];

  constructor(
    readonly mode: QueueMode,
    messages: readonly UserMessage[] = [],
  ) {
    this.#messages = [...messages];
  }

  push(message: UserMessage): void {
    this.#messages.push(message);
  }

  take(): UserMessage[] {
    return this.mode === 'all' ? this.#messages.splice(0) : this.#messages.splice(0, 1);
  }

  get size(): number {
    return this.#messages.length;
  }

  /** A copy, for a snapshot. */
  toArray(): UserMessage[] {
    return [...this.#messages];
  }
}
