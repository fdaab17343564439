import { randomBytes } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { RemoteErrors, errorMessage } from '../../core/errors.ts';
import { CancelListener } from './cancel-listener.ts';
import { HostSessions } from './host-sessions.ts';
import { openClient, type LinkedClient } from './connection.ts';
import { checkServeOptions, type ServeQueueOptions } from './serve-options.ts';
import { PROTOCOL, channels, checkCallData, type CallAnswer, type CallData } from './protocol.ts';
import { refusal, runQueuedCall, type ServedExecutor } from './queued-call.ts';
import { settleWithin } from './settle-within.ts';
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
/** Why a host's wait is unknown when Redis twice answered after the time to live it gave. */
const LATE_ANSWER = 'Redis answered later than the time to live it gave';
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
  readonly #hosts: HostSessions;
  readonly #worker: Worker;
  /** The calls running here by job id: their updates, and their grace period (for a bounded close). */
  readonly #calls = new Map<string, { relay: UpdateRelay; graceMs: number }>();
  /** The answers being made here, until they are. */
  readonly #running = new Set<Promise<CallAnswer>>();
  readonly #machine = `${process.pid}-${randomBytes(4).toString('hex')}`;
  readonly #beats: NodeJS.Timeout;
  readonly #alive: NodeJS.Timeout;
  #closing: Promise<void> | undefined;

  constructor(
    private readonly executor: ServedExecutor,
    options: ServeQueueOptions,
  ) {
    const { queue, concurrency, target, log } = checkServeOptions(options);
    this.#queueName = queue;
    this.#link = openClient(target, 'worker', `toolpool:worker:${this.#queueName}`);
    this.#hosts = new HostSessions(this.#link.redis, (session) => channels.hostWaiting(this.#queueName, session));
    this.#reportConnection(log);
    this.#cancels = new CancelListener(
      openClient(target, 'worker', `toolpool:cancels:${this.#queueName}`),
      channels.cancel(this.#queueName),
    );
    this.#worker = new Worker(this.#queueName, (job: Job) => this.#track(this.#process(job)), {
      connection: this.#link.redis,
      concurrency,
      autorun: false,
      // Never again after a stall: toolpool's own check refuses a second start anyway (see #process).
      maxStalledCount: 0,
    });
    this.#worker.on('error', () => undefined); // connection errors: BullMQ reconnects; a missing listener would crash the process
    this.#beats = setInterval(() => this.#beat(), BEAT_TICK_MS).unref();
    this.#alive = setInterval(() => this.#sayAlive(), ALIVE_EVERY_MS).unref();
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

  #track(answer: Promise<CallAnswer>): Promise<CallAnswer> {
    this.#running.add(answer);
    void answer.finally(() => this.#running.delete(answer));
    return answer;
  }

  async #process(job: Job): Promise<CallAnswer> {
    const call = checkCallData(job.data);
    if (typeof call === 'string') return refused(RemoteErrors.notACall(call));
    // BullMQ counts every start of a job: a second one means its first machine died with it (or its lock was lost), and it may have run.
    if (job.attemptsStarted > 1) return refused(RemoteErrors.startedBefore());
    if (this.#closing) return refused(RemoteErrors.stopping());
    const refusedWhy = refusal(this.executor, call);
    if (refusedWhy !== undefined) return refused(refusedWhy);
    const gaveUp = await this.#hostGaveUp(call);
    if (gaveUp !== undefined) return refused(gaveUp);
    const jobId = job.id!;
    const controller = this.#cancels.track(jobId);
    const relay = new UpdateRelay(job, call.heartbeatMs);
    this.#calls.set(jobId, { relay, graceMs: call.limits.abortGraceMs });
    try {
      const outcome = await runQueuedCall(this.executor, call, controller.signal, relay);
      // Without Redis the updates cannot arrive before the answer, nor the answer at all: no wait for them.
      await relay.drain(this.#link.ready ? DRAIN_MS : 0);
      // A call stopped by the shutdown says so, rather than that it was aborted.
      if (this.#closing && !outcome.ok)
        return { toolpool: PROTOCOL, ...outcome, error: RemoteErrors.shutDown(outcome.error) };
      return { toolpool: PROTOCOL, ...outcome };
    } finally {
      this.#cancels.untrack(jobId);
      this.#calls.delete(jobId);
    }
  }

  /** Why not to start a call whose host may no longer wait for it (see CallData.hostSession); undefined to start it. */
  async #hostGaveUp(call: CallData): Promise<string | undefined> {
    if (call.hostSession === undefined) return undefined;
    try {
      const wait = await this.#hosts.waiting(call.hostSession);
      if (wait === 'waits') return undefined;
      return wait === 'gave up' ? RemoteErrors.hostGaveUp() : RemoteErrors.hostUnknown(LATE_ANSWER);
    } catch (error) {
      return RemoteErrors.hostUnknown(errorMessage(error));
    }
  }

  #beat(): void {
    if (this.#calls.size === 0) return;
    const now = Date.now();
    for (const { relay } of this.#calls.values()) relay.beatIfQuiet(now);
  }

  /** Says once when Redis goes away, and once when it is back: calls wait for it meanwhile. */
  #reportConnection(log: (line: string) => void): void {
    let down = false;
    this.#link.redis.on('close', () => {
      // Redis may come back from its append-only file with jobs of hosts that gave up meanwhile: ask it again.
      this.#hosts.forget();
      if (down || this.#closing) return;
      down = true;
      // The error that closed it comes just after the close: read it on the next turn.
      setImmediate(() => log(RemoteErrors.workerLostRedis(this.#link.where, this.#link.lastError)));
    });
    this.#link.redis.on('ready', () => {
      if (!down) return;
      down = false;
      log(RemoteErrors.workerRedisBack(this.#link.where));
    });
  }

  /** One key per queue that every live machine keeps setting: while it exists, hosts know someone serves the queue. */
  #sayAlive(): void {
    if (this.#closing || !this.#link.ready) return;
    void this.#link.redis
      .set(channels.alive(this.#queueName), this.#machine, 'PX', ALIVE_FOR_MS)
      .catch(() => undefined);
  }

  async #close(): Promise<void> {
    clearInterval(this.#alive);
    const grace = Math.max(0, ...[...this.#calls.values()].map((running) => running.graceMs));
    // No more calls start here (pause without waiting; BullMQ's own close would wait for the calls running) ...
    void this.#worker.pause(true).catch(() => undefined);
    // ... and those running are stopped: they end within their grace period (killed if they ignore their signal).
    this.#cancels.abortAll();
    await settleWithin(Promise.all(this.#running), grace + CLOSE_MARGIN_MS);
    // With Redis there, BullMQ stores their answers as it closes. Without it they cannot be stored, and its graceful close
    // would wait for Redis (QUIT, retries): it is closed by force, which drops its connections instead.
    const graceful = this.#link.ready && (await settleWithin(this.#worker.close(), CLOSE_MARGIN_MS));
    if (!graceful) await settleWithin(this.#worker.close(true), 1_000);
    // Heartbeats went on until now: a call stopping during its grace period is not taken for lost.
    clearInterval(this.#beats);
    this.#cancels.close();
    this.#link.close();
  }
}

function refused(error: string): CallAnswer {
  return { toolpool: PROTOCOL, ok: false, error };
}
