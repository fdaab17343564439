import { RemoteErrors, ToolErrors, errorMessage } from '../../core/errors.ts';
import type { RemoteCall, RemoteOutcome } from '../../core/remote.ts';
import { withQueuedBefore } from '../../core/runner.ts';
import { VERDICT_AFTER_MS } from '../../isolation/worker/pool-call.ts';
import { MAX_HEARTBEAT_MS, PROTOCOL, readAnswer, readProgress, type CallData } from './protocol.ts';
import type { StreamEvent } from './event-reader.ts';

/** What one call needs from the runner that sent it: the queue, and the host's few Redis operations. */
export interface JobContext {
  readonly queue: string;
  readonly lostAfterMs: number;
  /** Resolves true once a job can be added (Redis connected, the event stream read from its end), false after a bound. */
  ready(): Promise<boolean>;
  add(jobId: string, tool: string, data: CallData): Promise<void>;
  /** 1 when the job was taken off the queue (or is gone), 0 when a worker machine holds it. */
  remove(jobId: string): Promise<number>;
  /** Asks the worker machine running the job to stop it (best effort: the host's own deadlines stand either way). */
  cancel(jobId: string): void;
  /** A job this host gave up on that may still be queued or running: taken off the queue, or stopped, once Redis is back. */
  abandon(jobId: string): void;
  /** Why Redis is unreachable, or undefined while it is connected. */
  redisDown(): string | undefined;
  /** The host's waiting session now (see CallData.hostSession); ready() has made its key exist. */
  hostSession(): string;
  readonly where: string;
}

/**
 * After the deadline of a timeout or an abort, how long the host still waits for the worker machine's own answer: its
 * executor may wait up to VERDICT_AFTER_MS to see how a thread it terminated ends (out of memory, killed, or still
 * inside a native call), and then answers.
 */
export const ANSWER_GRACE_MS = VERDICT_AFTER_MS + 2_000;
/** After a job was taken off the queue, how long the host waits for the stream to say so (or to deliver an answer that came first). */
const REMOVAL_WAIT_MS = 2_000;

type State = 'sending' | 'queued' | 'running' | 'settled';

/**
 * One call on its way through the queue, as the host sees it: sent, queued,
 * running on a worker machine (from its `active` event on), settled. Each
 * state has a bound: a queued call is taken off the queue when no worker
 * machine serves it (see the runner), a running one ends when its machine
 * goes quiet for `lostAfterMs` or overstays its timeout, and an abort ends
 * it even when the machine never confirms the stop.
 */
export class RemoteJob {
  #state: State = 'sending';
  readonly #sentAt = Date.now();
  #activeAt: number | undefined;
  #quiet: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  /** Set once a removal was asked for: what the call's error says when the stream confirms it. */
  #removedText: string | undefined;
  #aborting = false;
  #resolve!: (outcome: RemoteOutcome) => void;
  readonly outcome: Promise<RemoteOutcome>;

  constructor(
    private readonly context: JobContext,
    private readonly call: RemoteCall,
    readonly jobId: string,
  ) {
    this.outcome = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** Queued and not yet taken by a worker machine. */
  get waitingSince(): number | undefined {
    return this.#state === 'queued' ? this.#sentAt : undefined;
  }

  async run(): Promise<RemoteOutcome> {
    const { signal } = this.call;
    if (signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart() };
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    void this.outcome.then(() => signal?.removeEventListener('abort', this.#onAbort));
    await this.#send();
    return this.outcome;
  }

  async #send(): Promise<void> {
    const { context, call } = this;
    if (!(await context.ready()))
      return this.#settle({
        ok: false,
        error: RemoteErrors.redisDownBeforeSend(context.queue, context.where, context.redisDown() ?? 'not connected'),
      });
    if (this.#state !== 'sending') return;
    const data: CallData = {
      toolpool: PROTOCOL,
      callId: call.callId,
      ...(call.runId !== undefined ? { runId: call.runId } : {}),
      tool: call.tool,
      args: call.args as Record<string, unknown>,
      limits: call.limits,
      isolation: call.isolation,
      moduleHash: call.moduleHash,
      heartbeatMs: Math.min(MAX_HEARTBEAT_MS, Math.max(50, Math.floor(context.lostAfterMs / 4))),
      hostSession: context.hostSession(),
    };
    try {
      await context.add(this.jobId, call.tool, data);
    } catch (error) {
      // The command may have reached Redis before the connection dropped: should it have, the job goes again once Redis is back.
      context.abandon(this.jobId);
      // It may still run (see above): a ledger keeps it as started, never ended.
      return this.#settle({
        ok: false,
        error: RemoteErrors.redisDownBeforeSend(context.queue, context.where, errorMessage(error)),
        unsure: true,
      });
    }
    // Its events may already have moved it on (they come on another connection).
    if (this.#state === 'sending') this.#state = 'queued';
  }

  /** An entry of the queue's event stream about this job. */
  receive(event: StreamEvent): void {
    if (this.#state === 'settled') return;
    switch (event.event) {
      case 'active':
        return this.#started();
      case 'progress':
        return this.#progress(event.data ?? '');
      case 'completed':
        return this.#settle(
          this.#received(readAnswer(event.returnvalue ?? '', this.call.limits.maxResultBytes, this.context.queue)),
        );
      case 'failed':
        return this.#settle({
          ok: false,
          error: RemoteErrors.jobFailed(this.context.queue, event.failedReason ?? 'no reason given'),
        });
      case 'removed':
        return this.#settle({
          ok: false,
          error: this.#removedText ?? RemoteErrors.removedFromQueue(this.context.queue),
        });
    }
  }

  #started(): void {
    if (this.#activeAt !== undefined) return;
    this.#state = 'running';
    this.#activeAt = Date.now();
    this.#quiet = setTimeout(this.#lost, this.context.lostAfterMs);
    const { timeoutMs, abortGraceMs } = this.call.limits;
    this.#deadline = setTimeout(this.#overstayed, timeoutMs + abortGraceMs + ANSWER_GRACE_MS);
  }

  #progress(json: string): void {
    this.#quiet?.refresh();
    const progress = readProgress(json, this.call.limits.maxResultBytes, this.context.queue);
    if ('beat' in progress) return;
    if ('problem' in progress) {
      this.context.cancel(this.jobId);
      return this.#settle({ ok: false, error: progress.problem });
    }
    try {
      void this.call.onUpdate(progress.update);
    } catch {
      // a listener's error is the listener's business
    }
  }

  /** The worker machine's figures, with the time the job waited in Redis added to its queue time. */
  #received(outcome: RemoteOutcome): RemoteOutcome {
    return this.#activeAt === undefined ? outcome : withQueuedBefore(outcome, this.#activeAt - this.#sentAt);
  }

  readonly #lost = () => {
    this.context.cancel(this.jobId);
    const down = this.context.redisDown();
    const error =
      down !== undefined
        ? RemoteErrors.redisDownWhileOut(this.context.queue, this.context.where, down)
        : RemoteErrors.machineLost(this.context.queue, this.context.lostAfterMs);
    // Sent and lost: it may have run, or may run still; a ledger keeps it as started, never ended.
    this.#settle({ ok: false, error, unsure: true });
  };

  readonly #overstayed = () => {
    this.context.cancel(this.jobId);
    this.#settle({
      ok: false,
      error: this.#aborting
        ? RemoteErrors.noAnswerAfterAbort()
        : RemoteErrors.noAnswerAfterTimeout(this.call.limits.timeoutMs),
      unsure: true,
    });
  };

  readonly #onAbort = () => {
    if (this.#state === 'settled' || this.#aborting) return;
    this.#aborting = true;
    if (this.#state === 'sending') {
      // The add is on its way: the removal follows it on the same connection, so Redis sees them in that order.
      this.context.abandon(this.jobId);
      return this.#settle({ ok: false, error: ToolErrors.abortedBeforeStart() });
    }
    if (this.#state === 'queued') return this.takeOffQueue(ToolErrors.abortedBeforeStart());
    this.#stopRunning();
  };

  /** The worker machine is asked to stop the call (its executor kills a tool that ignores its signal); the host waits for its answer, bounded. */
  #stopRunning(): void {
    this.context.cancel(this.jobId);
    clearTimeout(this.#deadline);
    this.#deadline = setTimeout(this.#overstayed, this.call.limits.abortGraceMs + ANSWER_GRACE_MS);
  }

  /**
   * Takes a queued call off the queue, to end it with `error`. Only a
   * worker machine's lock stops the removal; then the call has started
   * (or is about to) and, when aborting, is stopped where it runs.
   */
  takeOffQueue(error: string): void {
    // Set first: the stream may say 'removed' before the removal's own reply comes back.
    this.#removedText = error;
    this.context.remove(this.jobId).then(
      (removed) => {
        if (this.#state === 'settled') return;
        if (removed === 0) {
          this.#removedText = undefined;
          return this.#aborting ? this.#stopRunning() : undefined;
        }
        // The stream says 'removed' (or brings the answer of a job that had just finished): whichever it is settles the call.
        setTimeout(() => this.#settle({ ok: false, error }), REMOVAL_WAIT_MS);
      },
      () => {
        this.context.abandon(this.jobId);
        this.#settle({ ok: false, error });
      },
    );
  }

  /** Redis stayed away for lostAfterMs while this call was out. */
  lostRedis(reason: string): void {
    if (this.#state === 'settled') return;
    if (this.#state === 'sending')
      return this.#settle({
        ok: false,
        error: RemoteErrors.redisDownBeforeSend(this.context.queue, this.context.where, reason),
      });
    this.context.abandon(this.jobId);
    this.#settle({
      ok: false,
      error: RemoteErrors.redisDownWhileOut(this.context.queue, this.context.where, reason),
      unsure: true,
    });
  }

  /** The host closes: the call ends now, and its job is taken off the queue or stopped where it runs. */
  close(): void {
    if (this.#state === 'settled') return;
    this.context.abandon(this.jobId);
    this.#settle({ ok: false, error: ToolErrors.poolClosed() });
  }

  #settle(outcome: RemoteOutcome): void {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    clearTimeout(this.#quiet);
    clearTimeout(this.#deadline);
    this.#resolve(outcome);
  }
}
