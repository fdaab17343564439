import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * The raw BullMQ baseline of case 16, as BullMQ's own docs suggest a
 * producer waits for results: one Queue to add jobs with its own ids, and
 * one QueueEvents whose 'completed' events settle them (no
 * waitUntilFinished, which adds a listener per job and races
 * removeOnComplete).
 */
export class RawBullmq {
  readonly #connection: Redis;
  readonly #eventsConnection: Redis;
  readonly #queue: Queue;
  readonly #events: QueueEvents;
  readonly #waiting = new Map<string, () => void>();
  #sequence = 0;

  constructor(url: string, name: string) {
    this.#connection = new Redis(url, { maxRetriesPerRequest: null });
    this.#queue = new Queue(name, { connection: this.#connection });
    this.#eventsConnection = new Redis(url, { maxRetriesPerRequest: null });
    this.#events = new QueueEvents(name, { connection: this.#eventsConnection });
    this.#events.on('completed', ({ jobId }) => {
      this.#waiting.get(jobId)?.();
      this.#waiting.delete(jobId);
    });
  }

  /** Resolves once events are read (QueueEvents starts at the stream's end on its first read: a ping proves it reads). */
  async ready(): Promise<void> {
    await this.#events.waitUntilReady();
    for (let attempt = 0; attempt < 20; attempt++) {
      const answered = await Promise.race([
        this.run(0).then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 500)),
      ]);
      if (answered) return;
    }
    throw new Error('raw BullMQ: no completed event within 10 s');
  }

  /** One round trip: add → the worker answers → its completed event. */
  run(n: number): Promise<void> {
    const jobId = `raw-${++this.#sequence}`;
    const done = new Promise<void>((resolve) => this.#waiting.set(jobId, resolve));
    return this.#queue.add('noop', { n }, { jobId, removeOnComplete: true, removeOnFail: true }).then(() => done);
  }

  async close(): Promise<void> {
    await this.#events.close();
    await this.#queue.close();
    this.#connection.disconnect();
    this.#eventsConnection.disconnect();
  }
}
