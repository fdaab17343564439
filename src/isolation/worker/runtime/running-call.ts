import { getHeapStatistics } from 'node:v8';
import type { MessagePort } from 'node:worker_threads';
import { CallContext, type ContextOwner } from '../../../core/call-context.ts';
import { ElicitErrors, boundText, errorMessage } from '../../../core/errors.ts';
import { elicitReplyError, noOneToAsk, type ElicitRequest, type ElicitResult } from '../../../core/elicitation.ts';
import { copyPayload } from '../payload.ts';
import type { ExecuteTask, ResultMessage, UpdateMessage, WorkerUsage } from '../protocol.ts';
import { stopError, type StopReason } from '../../../core/stop-timer.ts';
import type { ToolContext, ToolResult } from '../../../core/tool.ts';
import type { ResourceOwner } from './leftovers.ts';
import { isPromise, postOnPort, promiseThen } from './primordials.ts';

/**
 * How many updates may be in flight (posted, not yet consumed by the host)
 * before new ones are coalesced. While the host keeps up every update is
 * posted; when it falls behind, only the latest waiting one is kept, and it
 * is always posted before the result, on the same channel. The host
 * enforces the window too (UPDATE_WINDOW in worker-channel.ts).
 */
export const UPDATE_WINDOW = 64;
const FLUSH_RETRY_MS = 1;
/** Shared by every call when the executor grants no host functions. */
const NO_HOST_FUNCTIONS: ToolContext['host'] = Object.freeze({});

/**
 * The heap read for the call's usage, looked up once when the worker starts
 * and before any tool code runs (like primordials.ts), so a tool that
 * replaces `v8.getHeapStatistics` cannot change what the runtime reads. The
 * host uses it only where it cannot read the worker's heap itself (Node
 * 20), and only within the worker's heap limit; CPU time the host reads
 * itself (Node 22+) or not at all. `getHeapStatistics` is the cheaper heap
 * read: `process.memoryUsage()` costs 2-3 times as much.
 */
const heapStatistics = getHeapStatistics;

export type CallHost = (call: RunningCall, name: string, args: unknown[]) => Promise<unknown>;

/** Sends the call's question (ctx.elicit) to the host; resolves with the host's checked answer. */
export type AskHost = (call: RunningCall, request: unknown) => Promise<ElicitResult>;

/** Reads the host's messages already waiting on the channel, without waiting for an event-loop turn. */
export type PollHost = () => void;

/** One call running in this worker: its context, its update relay and how it ends. */
export class RunningCall implements ContextOwner, ResourceOwner {
  readonly leftovers = new Set<number>();
  pendingWaits = 0;
  // Created on first use: most calls never look at their signal.
  #controller: AbortController | undefined;
  #abortReason: StopReason | undefined;
  #fail: ((error: unknown) => void) | undefined;
  #earlyFailure: { error: unknown } | undefined;
  #settled = false;
  #posted = 0;
  #consumed = 0;
  #pending: ToolResult | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  /** The thread's CPU time when `execute` was called (0 where it cannot be measured). */
  readonly #onSettle = new Set<() => void>();
  /** Questions (ctx.elicit) waiting for an answer: a stop ends them. */
  readonly #onAbort = new Set<() => void>();
  readonly context: ToolContext;

  constructor(
    readonly task: ExecuteTask,
    private readonly port: MessagePort,
    callHost: CallHost,
    private readonly pollHost: PollHost,
    private readonly askHost?: AskHost,
  ) {
    this.context = new CallContext(
      this,
      task.callId,
      this.#hostFunctions(task.hostFunctions, callHost),
      typeof task.batchRunId === 'string' ? task.batchRunId : undefined,
    );
  }

  get settled(): boolean {
    return this.#settled;
  }

  /**
   * Runs `execute` and resolves with the result message (not yet posted).
   * A tool that returns synchronously is answered without a single promise:
   * that is the common case for cheap tools.
   */
  run(execute: () => ToolResult | Promise<ToolResult>): ResultMessage | Promise<ResultMessage> {
    let value: ToolResult | Promise<ToolResult>;
    try {
      value = execute();
    } catch (thrown) {
      return this.#fault(thrown);
    }
    if (this.#earlyFailure !== undefined) return this.#fault(this.#earlyFailure.error);
    if (!isPromise(value)) return this.#reply(value);
    return new Promise<ResultMessage>((resolve) => {
      this.#fail = (error) => resolve(this.#fault(error));
      promiseThen(
        value as Promise<ToolResult>,
        (result) => resolve(this.#reply(result)),
        (thrown: unknown) => resolve(this.#fault(thrown)),
      );
    });
  }

  #fault(thrown: unknown): ResultMessage {
    const usage = this.#usage();
    this.#settle();
    return this.#faultMessage(thrown, usage);
  }

  #faultMessage(thrown: unknown, usage: WorkerUsage | undefined): ResultMessage {
    const message: ResultMessage = {
      t: 'result',
      runId: this.task.runId,
      ok: false,
      error: boundText(safeErrorMessage(thrown)),
      code: 'THREW',
    };
    if (usage) message.usage = usage;
    return message;
  }

  #reply(result: unknown): ResultMessage {
    const usage = this.#usage();
    // The waiting update is copied only now: a tool that changed it since (past the size bound) fails as it would have then.
    const lastUpdate = this.#settle();
    if (lastUpdate) return this.#faultMessage(new Error(lastUpdate), usage);
    const { runId } = this.task;
    const copied = copyPayload(result, 'result', this.task.maxResultBytes);
    const message: ResultMessage = copied.ok
      ? { t: 'result', runId, ok: true, result: copied.value as ToolResult }
      : { t: 'result', runId, ok: false, error: copied.error, code: copied.code };
    if (usage) message.usage = usage;
    return message;
  }

  /**
   * Read when the tool's code is done, before the runtime copies its result;
   * only when the host asks (someone reads the usage, and the host cannot
   * read this worker's heap itself). With a worker idle between calls the
   * heap read costs ~3-5 µs.
   */
  #usage(): WorkerUsage | undefined {
    if (!this.task.measureUsage) return undefined;
    const heapUsedBytes = heapStatistics().used_heap_size;
    return { heapUsedBytes };
  }

  /** An error raised by this call's code outside `execute`'s promise (a timer, a late rejection). */
  fail(error: unknown): void {
    if (this.#fail) this.#fail(error);
    else this.#earlyFailure ??= { error }; // raised while execute was still running synchronously
  }

  abort(reason: StopReason): void {
    this.#abortReason ??= reason;
    this.#controller?.abort(stopError(reason));
    for (const cancel of this.#onAbort) cancel();
    this.#onAbort.clear();
  }

  /** The host has consumed this many of the call's updates. */
  acknowledge(consumed: number): void {
    if (consumed > this.#consumed && consumed <= this.#posted) this.#consumed = consumed;
  }

  /**
   * Host functions as the tool sees them. A host call still pending when
   * the tool's call ends is cancelled: its promise rejects, so a tool can
   * never act on an answer that arrives after its call is over.
   */
  #hostFunctions(names: string[], callHost: CallHost): ToolContext['host'] {
    if (names.length === 0) return NO_HOST_FUNCTIONS;
    const functions: ToolContext['host'] = {};
    for (const name of names) {
      functions[name] = (...args: unknown[]) => {
        if (this.#settled)
          return Promise.reject(new Error(`Host call ${name}() refused: the tool call already ended.`));
        return new Promise((resolve, reject) => {
          const cancel = () => reject(new Error(`Host call ${name}() cancelled: the tool call ended.`));
          this.#onSettle.add(cancel);
          callHost(this, name, args)
            .then(resolve, reject)
            .finally(() => this.#onSettle.delete(cancel));
        });
      };
    }
    return functions;
  }

  /**
   * The tool's question, relayed to the host (which checks it, asks and
   * checks the answer). It rejects when the call is stopped (its signal
   * fires) or ends, so a tool never acts on an answer after its call is over.
   */
  elicit(request: ElicitRequest): Promise<ElicitResult> {
    const ended = () => elicitReplyError(ElicitErrors.ended(), 'TOOLPOOL_ERR_ELICITATION');
    if (!this.askHost) return noOneToAsk();
    if (this.#settled || this.#abortReason) return Promise.reject(ended());
    return new Promise((resolve, reject) => {
      const cancel = () => reject(ended());
      this.#onSettle.add(cancel);
      this.#onAbort.add(cancel);
      this.askHost!(this, request)
        .then(resolve, reject)
        .finally(() => {
          this.#onSettle.delete(cancel);
          this.#onAbort.delete(cancel);
        });
    });
  }

  /** The call's signal, made on first use. */
  signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(stopError(this.#abortReason));
    }
    return this.#controller.signal;
  }

  update(partial: ToolResult): void {
    if (this.#settled) return; // S10: valid only during the call
    // A tool flooding updates synchronously never yields, so acks would wait for its next turn: read them now.
    if (this.#posted - this.#consumed >= UPDATE_WINDOW) this.pollHost();
    if (this.#posted - this.#consumed < UPDATE_WINDOW) {
      // This one is newer than any update still waiting for room: posted later, the waiting one would arrive last.
      this.#pending = undefined;
      this.#postOrFail(partial);
    } else {
      // Coalesce: latest wins. Kept by reference and copied when posted.
      this.#pending = partial;
      this.#flushTimer ??= setTimeout(() => this.#flushWhenRoom(), FLUSH_RETRY_MS);
    }
  }

  #flushWhenRoom(): void {
    this.#flushTimer = undefined;
    if (this.#settled || !this.#pending) return;
    if (this.#posted - this.#consumed < UPDATE_WINDOW) {
      const pending = this.#pending;
      this.#pending = undefined;
      this.#postOrFail(pending);
    } else {
      this.#flushTimer = setTimeout(() => this.#flushWhenRoom(), FLUSH_RETRY_MS);
    }
  }

  #postOrFail(partial: ToolResult): void {
    const problem = this.#post(partial);
    if (problem) this.fail(new Error(problem));
  }

  /** Returns why the update cannot be sent (too large, not copyable), or undefined once it is posted. */
  #post(partial: ToolResult): string | undefined {
    const copied = copyPayload(partial, 'update', this.task.maxResultBytes);
    if (!copied.ok) return copied.error;
    this.#posted++;
    const message: UpdateMessage = { t: 'update', runId: this.task.runId, partial: copied.value as ToolResult };
    postOnPort(this.port, message);
    return undefined;
  }

  /**
   * The last update is always delivered, and before the result: same
   * channel, posted first. Returns why it could not be sent, if it could not.
   */
  #settle(): string | undefined {
    const pending = this.#pending;
    this.#pending = undefined;
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    const problem = pending ? this.#post(pending) : undefined;
    this.#settled = true;
    for (const cancel of this.#onSettle) cancel();
    this.#onSettle.clear();
    return problem;
  }
}

/** An error's text, bounded, without trusting the thrown value (its getters, its toString). */
function safeErrorMessage(thrown: unknown): string {
  try {
    return errorMessage(thrown);
  } catch {
    return 'the tool threw a value that cannot be read';
  }
}
