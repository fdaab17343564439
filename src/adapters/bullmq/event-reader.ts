import type { LinkedClient } from './connection.ts';

/** One entry of BullMQ's event stream: `event`, `jobId` and the event's own fields, as strings. */
export type StreamEvent = Readonly<Record<string, string>>;

/** Entries read at once; a reader that fell behind catches up in steps of this many. */
const BATCH = 1_000;
/** How long one XREAD blocks; the loop then checks whether it was closed. */
const BLOCK_MS = 1_000;
const RETRY_MS = 100;

/**
 * Reads a queue's event stream (`bull:<queue>:events`) on a connection of
 * its own and hands every entry to `deliver`, in stream order: a job's
 * progress before its completion, the same order the worker wrote them in.
 * Unlike BullMQ's QueueEvents it starts where the stream ends when it
 * connects (QueueEvents starts at `$` on its first read, missing what came
 * in between), resumes from the last entry it read after a reconnect, and
 * never parses a field itself: what a field holds is checked by whoever
 * reads it.
 */
export class EventReader {
  #lastId: string | undefined;
  #closed = false;
  readonly #positioned: Promise<void>;
  #markPositioned!: () => void;

  constructor(
    private readonly link: LinkedClient,
    private readonly key: string,
    private readonly deliver: (event: StreamEvent) => void,
  ) {
    this.#positioned = new Promise((resolve) => (this.#markPositioned = resolve));
    void this.#loop();
  }

  /** Resolves true once the reader knows where the stream ends (no event of a job added from now on can be missed), false after `ms`. */
  positioned(ms: number): Promise<boolean> {
    if (this.#lastId !== undefined) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      void this.#positioned.then(() => (clearTimeout(timer), resolve(true)));
    });
  }

  close(): void {
    this.#closed = true;
    this.link.close();
  }

  async #loop(): Promise<void> {
    const { redis } = this.link;
    while (!this.#closed) {
      if (!this.link.ready) {
        await this.link.whenReady(BLOCK_MS);
        continue;
      }
      try {
        if (this.#lastId === undefined) {
          const last = (await redis.xrevrange(this.key, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
          this.#lastId = last[0]?.[0] ?? '0-0';
          this.#markPositioned();
        }
        const reply = (await redis.xread(
          'COUNT',
          BATCH,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          this.key,
          this.#lastId,
        )) as Array<[string, Array<[string, string[]]>]> | null;
        for (const [id, fields] of reply?.[0]?.[1] ?? []) {
          this.#lastId = id;
          this.#deliverEntry(fields);
        }
      } catch {
        if (!this.#closed) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  #deliverEntry(fields: string[]): void {
    const event: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 0; i + 1 < fields.length; i += 2) event[fields[i]!] = fields[i + 1]!;
    try {
      this.deliver(event);
    } catch {
      // A listener's failure must not stop the stream for every other call.
    }
  }
}
