import { randomBytes } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { RemoteErrors } from '../../errors.ts';
import { CancelListener } from './cancel-listener.ts';
import { openClient, type LinkedClient } from './connection.ts';
import { checkServeOptions, type ServeQueueOptions } from './serve-options.ts';
import { PROTOCOL, channels, checkCallData, type CallAnswer } from './protocol.ts';
import { refusal, runQueuedCall, type ServedExecutor } from './queued-call.ts';
import { settleWithin } from './remote-runner.ts';
import { UpdateRelay } from './update-relay.ts';

/** A running `serveQueue`. */
export interface QueueServer {
  /**
   * Stops taking calls, stops the calls running here (their signal, then a
   * kill after their grace period) and answers them with an error, then
   * leaves Redis. Bounded also when Redis is unreachable. The executor is
   * the caller's: close it after this.
   */
  close(): Promise<void>;
}

/** How often running calls are looked at for a heartbeat due, and how often this machine says it is alive. */
const BEAT_TICK_MS = 50;
const ALIVE_EVERY_MS = 1_000;
const ALIVE_FOR_MS = 3_000;
/** How long a finished call waits for its updates to reach Redis before its answer goes anyway. */
const DRAIN_MS = 2_000;
/** On close, beyond the grace period of the calls running: time for their answers to reach Redis. */
const CLOSE_MARGIN_MS = 3_000;

/**
 * A worker machine: takes calls from the queue and runs each through
 * `executor` (its tiers, limits and hard kill), relaying its updates as
 * job progress and answering with its result or error text.
 */
export function serveQueue(executor: ServedExecutor, options: ServeQueueOptions): QueueServer {
  return new QueueService(executor, options);
}

class QueueService implements QueueServer {
  readonly #queueName: string;
  readonly #link: LinkedClient;
  readonly #cancels: CancelListener;
  readonly #worker: Worker;
  readonly #relays = new Map<string, UpdateRelay>();
  /** The grace period of each call running here, for a bounded close. */
  readonly #graces = new Map<string, number>();
  readonly #machine = `${process.pid}-${randomBytes(4).toString('hex')}`;
  readonly #timers: NodeJS.Timeout[] = [];
  #closing: Promise<void> | undefined;

  constructor(
    private readonly executor: ServedExecutor,
    options: ServeQueueOptions,
  ) {
    const { queue, concurrency, target } = checkServeOptions(options);
    this.#queueName = queue;
    this.#link = openClient(target, 'worker', `toolpool:worker:${this.#queueName}`);
    this.#cancels = new CancelListener(openClient(target, 'worker', `toolpool:cancels:${this.#queueName}`), channels.cancel(this.#queueName));
    this.#worker = new Worker(this.#queueName, (job: Job) => this.#process(job), {
      connection: this.#link.redis,
      concurrency,
      autorun: false,
      // Never again after a stall: toolpool's own check refuses a second start anyway (see #process).
      maxStalledCount: 0,
    });
    this.#worker.on('error', () => undefined); // connection errors: BullMQ reconnects; a missing listener would crash the process
    this.#timers.push(setInterval(() => this.#beat(), BEAT_TICK_MS), setInterval(() => this.#sayAlive(), ALIVE_EVERY_MS));
    for (const timer of this.#timers) timer.unref();
    // Listen for cancels before the first call can start, so none is missed.
    void this.#cancels.listen().then(
      () => {
        if (this.#closing) return;
        this.#sayAlive();
        this.#worker.run().catch(() => undefined);
      },
      () => undefined,
    );
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #process(job: Job): Promise<CallAnswer> {
    const call = checkCallData(job.data);
    if (typeof call === 'string') return refused(RemoteErrors.notACall(call));
    // BullMQ counts every start of a job: a second one means its first machine died with it (or its lock was lost), and it may have run.
    if (job.attemptsStarted > 1) return refused(RemoteErrors.startedBefore());
    if (this.#closing) return refused(RemoteErrors.stopping());
    const refusedWhy = refusal(this.executor, call);
    if (refusedWhy !== undefined) return refused(refusedWhy);
    const jobId = job.id!;
    const controller = this.#cancels.track(jobId);
    const relay = new UpdateRelay(job, call.heartbeatMs);
    this.#relays.set(jobId, relay);
    this.#graces.set(jobId, call.limits.abortGraceMs);
    try {
      const outcome = await runQueuedCall(this.executor, call, controller.signal, relay);
      await relay.drain(DRAIN_MS);
      // A call stopped by the shutdown says so, rather than that it was aborted.
      if (this.#closing && !outcome.ok) return { toolpool: PROTOCOL, ...outcome, error: RemoteErrors.shutDown(outcome.error) };
      return { toolpool: PROTOCOL, ...outcome };
    } finally {
      this.#cancels.untrack(jobId);
      this.#relays.delete(jobId);
      this.#graces.delete(jobId);
    }
  }

  #beat(): void {
    if (this.#relays.size === 0) return;
    const now = Date.now();
    for (const relay of this.#relays.values()) relay.beatIfQuiet(now);
  }

  /** One key per queue that every live machine keeps setting: while it exists, hosts know someone serves the queue. */
  #sayAlive(): void {
    if (this.#closing || !this.#link.ready) return;
    void this.#link.redis.set(channels.alive(this.#queueName), this.#machine, 'PX', ALIVE_FOR_MS).catch(() => undefined);
  }

  async #close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    const grace = Math.max(0, ...this.#graces.values());
    // BullMQ's own close waits for the calls running: stopped first, they end within their grace period (killed if they ignore it).
    this.#cancels.abortAll();
    const closed = this.#worker.close();
    if (!(await settleWithin(closed, grace + CLOSE_MARGIN_MS))) {
      // Redis is away: their answers cannot be stored. Dropping the connections ends BullMQ's waits.
      this.#link.close();
      await settleWithin(closed, 1_000);
    }
    this.#cancels.close();
    this.#link.close();
  }
}

function refused(error: string): CallAnswer {
  return { toolpool: PROTOCOL, ok: false, error };
}
