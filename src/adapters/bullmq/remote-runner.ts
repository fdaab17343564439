import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { RemoteErrors, ToolErrors } from '../../core/errors.ts';
import type { RemoteCall, RemoteOutcome, RemoteRunner } from '../../core/remote.ts';
import { openClient, redisTarget, type Connection, type LinkedClient } from './connection.ts';
import { EventReader, type StreamEvent } from './event-reader.ts';
import { checkQueueName } from './queue-name.ts';
import { channels, type CallData } from './protocol.ts';
import { RemoteJob, type JobContext } from './remote-job.ts';
import { settleWithin } from './settle-within.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

export interface RemoteRunnerOptions {
  /** Where Redis is: a `redis://` / `rediss://` URL, or `{ host, port, username?, password?, db?, tls? }`. */
  connection: Connection;
  /** The BullMQ queue the worker machines serve (BullMQ's default key prefix, `bull`). */
  queue: string;
  /**
   * How long a running call may go without a word from its worker machine
   * (they send a heartbeat four times as often) before it ends with an
   * error, and how long Redis may stay unreachable, or the queue without
   * any worker machine, before calls waiting on it end (default 10000).
   * Only for calls that were sent: one that cannot be sent waits
   * `connectTimeoutMs` at most.
   */
  lostAfterMs?: number;
  /**
   * How long a call waits for Redis before it is sent (and how long a TCP
   * connect may take): past it the call ends with an error naming Redis,
   * rather than waiting `lostAfterMs`. A runner that cannot reach Redis this
   * long after it is made warns once (a `ToolpoolWarning`). Default 2000.
   */
  connectTimeoutMs?: number;
}

const DEFAULT_LOST_AFTER_MS = 10_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
/** Abandoned jobs remembered for cleaning up once Redis is back; past this the oldest are forgotten. */
const MAX_ABANDONED = 10_000;
/** How long close() waits for the last cancels to reach Redis. */
const CLOSE_FLUSH_MS = 500;

/**
 * The host side of `toolpool/bullmq`: each call of a module tool becomes a
 * BullMQ job of the queue, with toolpool's own job id, and its updates and
 * answer come back through the queue's event stream, read by one reader
 * for all calls. See README "Across machines" for what is guaranteed.
 */
export function remoteRunner(options: RemoteRunnerOptions): RemoteRunner {
  return new QueueRunner(options);
}

class QueueRunner implements RemoteRunner {
  readonly #queueName: string;
  readonly #lostAfterMs: number;
  readonly #connectTimeoutMs: number;
  /** Says once, connectTimeoutMs after the runner is made, that Redis has not answered. */
  #startCheck: NodeJS.Timeout | undefined;
  readonly #command: LinkedClient;
  readonly #readerLink: LinkedClient;
  readonly #queue: Queue;
  readonly #reader: EventReader;
  readonly #jobs = new Map<string, RemoteJob>();
  /** Unique per runner, so two hosts on one queue never pick the same job id. */
  readonly #idPrefix = `tp${randomBytes(6).toString('hex')}`;
  #sequence = 0;
  readonly #abandoned = new Set<string>();
  /** The removals and cancels of abandoned jobs on their way to Redis. */
  readonly #cleaning = new Set<Promise<unknown>>();
  #downTimer: NodeJS.Timeout | undefined;
  /** This host's waiting session (CallData.hostSession), and its key's first SET in that session. */
  #session = newSession();
  #sessionKeySet: Promise<boolean> | undefined;
  readonly #keepWaiting: NodeJS.Timeout;
  #workerCheck: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #context: JobContext;

  constructor(options: RemoteRunnerOptions) {
    this.#queueName = checkQueueName('remoteRunner', options.queue);
    this.#lostAfterMs = checkMs('lostAfterMs', options.lostAfterMs, DEFAULT_LOST_AFTER_MS);
    this.#connectTimeoutMs = checkMs('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
    const target = redisTarget(options.connection);
    this.#command = openClient(target, 'command', `toolpool:host:${this.#queueName}`, this.#connectTimeoutMs);
    this.#readerLink = openClient(target, 'reader', `toolpool:host-events:${this.#queueName}`, this.#connectTimeoutMs);
    // The version check would be one more request that can fail before the first add; the host only adds and removes jobs.
    this.#queue = new Queue(this.#queueName, { connection: this.#command.redis, skipVersionCheck: true });
    this.#queue.on('error', () => undefined); // connection errors end calls through the links' states, not as exceptions
    this.#reader = new EventReader(this.#readerLink, channels.events(this.#queueName), (event) => this.#deliver(event));
    for (const link of [this.#command, this.#readerLink]) {
      link.redis.on('close', () => this.#connectionLost());
      link.redis.on('ready', () => this.#connectionBack());
    }
    this.#context = this.#jobContext(target.where);
    // The key expires lostAfterMs after its last refresh, so it is gone by the time this host gives up on Redis.
    this.#keepWaiting = setInterval(
      () => void this.#refreshSession(),
      Math.max(20, Math.floor(this.#lostAfterMs / 8)),
    ).unref();
    this.#startCheck = setTimeout(() => this.#warnIfUnreachable(target.where), this.#connectTimeoutMs).unref();
  }

  /** A host on a dead Redis still starts (Redis may come up later), but says so once rather than leaving it to the first call. */
  #warnIfUnreachable(where: string): void {
    this.#startCheck = undefined;
    const reason = this.#redisDown();
    if (this.#closed || reason === undefined) return;
    process.emitWarning(
      RemoteErrors.redisUnreachableAtStart(this.#queueName, where, reason, this.#connectTimeoutMs),
      'ToolpoolWarning',
    );
  }

  execute(call: RemoteCall): Promise<RemoteOutcome> {
    if (this.#closed) return Promise.resolve({ ok: false, error: ToolErrors.poolClosed() });
    const job = new RemoteJob(this.#context, call, `${this.#idPrefix}-${++this.#sequence}`);
    this.#jobs.set(job.jobId, job);
    this.#watchForWorkers();
    return job.run().finally(() => this.#jobs.delete(job.jobId));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#downTimer);
    clearTimeout(this.#startCheck);
    clearInterval(this.#workerCheck);
    clearInterval(this.#keepWaiting);
    // Each call ends now; its job is taken off the queue, or stopped where it runs, as far as Redis lets that happen in time.
    for (const job of this.#jobs.values()) job.close();
    // No job of this session starts any more, wherever it still waits (a removal that did not reach Redis in time).
    const ended = this.#command.ready
      ? this.#command.redis.del(channels.hostWaiting(this.#queueName, this.#session)).catch(() => 0)
      : undefined;
    await settleWithin(Promise.all([...this.#cleaning, ended, this.#queue.close()]), CLOSE_FLUSH_MS);
    this.#reader.close();
    this.#command.close();
  }

  #jobContext(where: string): JobContext {
    return {
      queue: this.#queueName,
      lostAfterMs: this.#lostAfterMs,
      where,
      // A call not yet sent waits for Redis connectTimeoutMs in all, not lostAfterMs: that bound is for calls that are out.
      ready: async () => {
        const deadline = Date.now() + this.#connectTimeoutMs;
        const left = () => Math.max(0, deadline - Date.now());
        // Both links: the session key is set only while both are up (see #refreshSession).
        return (
          (await this.#command.whenReady(this.#connectTimeoutMs)) &&
          (await this.#readerLink.whenReady(left())) &&
          (await this.#reader.positioned(left())) &&
          (await this.#sessionKey())
        );
      },
      hostSession: () => this.#session,
      add: async (jobId: string, tool: string, data: CallData) => {
        await this.#queue.add(tool, data, { jobId, removeOnComplete: true, removeOnFail: true, attempts: 1 });
      },
      remove: (jobId: string) => this.#queue.remove(jobId),
      cancel: (jobId: string) =>
        void this.#command.redis.publish(channels.cancel(this.#queueName), jobId).catch(() => this.#abandon(jobId)),
      abandon: (jobId: string) => this.#abandon(jobId),
      redisDown: () => this.#redisDown(),
    };
  }

  #deliver(event: StreamEvent): void {
    const jobId = event.jobId;
    if (jobId !== undefined) this.#jobs.get(jobId)?.receive(event);
  }

  #redisDown(): string | undefined {
    if (this.#command.ready && this.#readerLink.ready) return undefined;
    const link = this.#command.ready ? this.#readerLink : this.#command;
    // Connected but never ready (a port that takes connections and never answers): no error was seen, only silence.
    return link.errorSeen ? link.lastError : RemoteErrors.redisNoAnswer(this.#connectTimeoutMs);
  }

  /** Redis went away: calls out wait lostAfterMs for it to come back, then end. */
  #connectionLost(): void {
    if (this.#closed || this.#downTimer) return;
    this.#downTimer = setTimeout(() => {
      this.#downTimer = undefined;
      const reason = this.#redisDown();
      if (reason === undefined) return;
      for (const job of this.#jobs.values()) job.lostRedis(reason);
      // The calls out were told they failed: their jobs, should Redis come back with them, must not start. A new
      // session leaves the old key expired for good.
      this.#session = newSession();
      this.#sessionKeySet = undefined;
    }, this.#lostAfterMs);
  }

  #connectionBack(): void {
    if (this.#redisDown() !== undefined) return;
    clearTimeout(this.#downTimer);
    this.#downTimer = undefined;
    void this.#refreshSession();
    this.#cleanUpAbandoned();
  }

  /** The session key, set once per session before the first job of it is added; false when Redis refused. */
  #sessionKey(): Promise<boolean> {
    // A key not set (Redis refused, or a link dropped) is tried again by the next call, not remembered as failed.
    this.#sessionKeySet ??= this.#refreshSession().then((set) => {
      if (!set) this.#sessionKeySet = undefined;
      return set;
    });
    return this.#sessionKeySet;
  }

  async #refreshSession(): Promise<boolean> {
    // Not while either link is down: this host may give up on Redis then, and its key must expire by that time.
    if (this.#closed || this.#redisDown() !== undefined) return false;
    try {
      await this.#command.redis.set(channels.hostWaiting(this.#queueName, this.#session), '1', 'PX', this.#lostAfterMs);
      return true;
    } catch {
      return false;
    }
  }

  /** A job this host no longer waits for: off the queue if it still waits there, stopped if it runs. */
  #abandon(jobId: string): void {
    if (this.#abandoned.size >= MAX_ABANDONED) this.#abandoned.delete(this.#abandoned.values().next().value!);
    this.#abandoned.add(jobId);
    if (this.#command.ready) this.#cleanUpAbandoned();
  }

  #cleanUpAbandoned(): void {
    for (const jobId of [...this.#abandoned]) {
      this.#abandoned.delete(jobId);
      const sent = this.#queue.remove(jobId).then(
        (removed) =>
          removed === 0
            ? this.#command.redis.publish(channels.cancel(this.#queueName), jobId).catch(() => undefined)
            : undefined,
        () => void this.#abandoned.add(jobId),
      );
      this.#cleaning.add(sent);
      void sent.finally(() => this.#cleaning.delete(sent));
    }
  }

  /**
   * While calls wait in the queue, checks every lostAfterMs that some
   * worker machine serves it (each live one keeps a short-lived key set);
   * calls that waited that long with none are taken off the queue.
   */
  #watchForWorkers(): void {
    if (this.#workerCheck) return;
    this.#workerCheck = setInterval(() => void this.#checkForWorkers(), this.#lostAfterMs).unref();
  }

  async #checkForWorkers(): Promise<void> {
    const now = Date.now();
    const waiting = [...this.#jobs.values()].filter(
      (job) => job.waitingSince !== undefined && now - job.waitingSince >= this.#lostAfterMs,
    );
    if (this.#jobs.size === 0) {
      clearInterval(this.#workerCheck);
      this.#workerCheck = undefined;
    }
    if (waiting.length === 0 || !this.#command.ready) return;
    const alive = await this.#command.redis.exists(channels.alive(this.#queueName)).catch(() => 1);
    if (alive > 0) return;
    for (const job of waiting) job.takeOffQueue(RemoteErrors.noWorkers(this.#queueName, now - job.waitingSince!));
  }
}

function checkMs(option: string, value: unknown, byDefault: number): number {
  if (value === undefined) return byDefault;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 100) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badOption('remoteRunner', option, 'must be a number of milliseconds >= 100'),
    );
  }
  return value;
}

/** A waiting session's id: 16 hex digits. */
function newSession(): string {
  return randomBytes(8).toString('hex');
}
