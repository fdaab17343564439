import type { MessagePort } from 'node:worker_threads';
import { CallContext, type ContextOwner } from '../src/call-context.ts';
import { errorMessage } from '../src/errors.ts';
import type { CallTable } from '../src/pool/call-table.ts';
import { problemWithPayload } from '../src/pool/payload.ts';
import type { ExecuteReply, ExecuteTask, UpdateMessage } from '../src/pool/protocol.ts';
import { stopError, type StopReason } from '../src/stop-timer.ts';
import type { ToolContext, ToolResult } from '../src/tool.ts';

/**
 * How many updates may be in flight (posted, not yet consumed by the host)
 * before new ones are coalesced. While the host keeps up every update is
 * posted; when it falls behind, only the latest waiting one is kept, and it
 * is always posted before the result.
 */
const UPDATE_WINDOW = 64;
const FLUSH_RETRY_MS = 1;
/** Shared by every call when the executor grants no host functions. */
const NO_HOST_FUNCTIONS: ToolContext['host'] = Object.freeze({});

/** One call running in this worker: its context, its update relay and how it ends. */
export class RunningCall implements ContextOwner {
  // Created on first use: most calls never look at their signal.
  #controller: AbortController | undefined;
  #abortReason: StopReason | undefined;
  #fail: ((error: unknown) => void) | undefined;
  #earlyFailure: { error: unknown } | undefined;
  #settled = false;
  #posted = 0;
  #pending: ToolResult | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #onSettle = new Set<() => void>();
  readonly context: ToolContext;

  constructor(
    readonly task: ExecuteTask,
    private readonly threadId: number,
    private readonly port: MessagePort,
    private readonly table: CallTable,
    callHost: (name: string, args: unknown[]) => Promise<unknown>,
  ) {
    this.context = new CallContext(this, task.callId, this.#hostFunctions(task.hostFunctions, callHost));
  }

  get settled(): boolean {
    return this.#settled;
  }

  /**
   * Runs `execute`; an error attributed to this call (uncaught, oversized
   * update) fails it early. A tool that returns synchronously is answered
   * without a single promise: that is the common case for cheap tools.
   */
  run(execute: () => ToolResult | Promise<ToolResult>): ExecuteReply | Promise<ExecuteReply> {
    let value: ToolResult | Promise<ToolResult>;
    try {
      value = execute();
    } catch (thrown) {
      return this.#reply(undefined, errorMessage(thrown));
    }
    if (this.#earlyFailure !== undefined) return this.#reply(undefined, errorMessage(this.#earlyFailure.error));
    if (!(value instanceof Promise)) return this.#reply(value, problemWithPayload(value, 'result', this.task.maxResultBytes));
    return new Promise<unknown>((resolve, reject) => {
      this.#fail = reject;
      value.then(resolve, reject);
    }).then(
      (result) => this.#reply(result, problemWithPayload(result, 'result', this.task.maxResultBytes)),
      (thrown: unknown) => this.#reply(undefined, errorMessage(thrown)),
    );
  }

  #reply(result: unknown, error: string | undefined): ExecuteReply {
    this.#settle();
    const { threadId } = this;
    const updates = this.#posted;
    return error === undefined
      ? { ok: true, result: result as ToolResult, threadId, updates }
      : { ok: false, error, threadId, updates };
  }

  /** An error raised by this call's code outside `execute`'s promise (a timer, a late rejection). */
  fail(error: unknown): void {
    if (this.#fail) this.#fail(error);
    else this.#earlyFailure ??= { error }; // raised while execute was still running synchronously
  }

  abort(reason: StopReason): void {
    this.#abortReason ??= reason;
    this.#controller?.abort(stopError(reason));
  }

  /**
   * Host functions as the tool sees them. A host call still pending when
   * the tool's call ends is cancelled: its promise rejects, so a tool can
   * never act on an answer that arrives after its call is over.
   */
  #hostFunctions(names: string[], callHost: (name: string, args: unknown[]) => Promise<unknown>): ToolContext['host'] {
    if (names.length === 0) return NO_HOST_FUNCTIONS;
    const functions: ToolContext['host'] = {};
    for (const name of names) {
      functions[name] = (...args: unknown[]) => {
        if (this.#settled) return Promise.reject(new Error(`Host call ${name}() refused: the tool call already ended.`));
        return new Promise((resolve, reject) => {
          const cancel = () => reject(new Error(`Host call ${name}() cancelled: the tool call ended.`));
          this.#onSettle.add(cancel);
          callHost(name, args)
            .then(resolve, (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))))
            .finally(() => this.#onSettle.delete(cancel));
        });
      };
    }
    return functions;
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
    const problem = problemWithPayload(partial, 'update', this.task.maxResultBytes);
    if (problem) return this.fail(new Error(problem));
    if (this.#inFlight() < UPDATE_WINDOW) {
      this.#post(partial);
    } else {
      // Coalesce: latest wins. Kept by reference; if the tool mutates it later,
      // what is sent is newer still, which is what latest-wins means.
      this.#pending = partial;
      this.#flushTimer ??= setTimeout(() => this.#flushWhenRoom(), FLUSH_RETRY_MS);
    }
  }

  #flushWhenRoom(): void {
    this.#flushTimer = undefined;
    if (this.#settled || !this.#pending) return;
    if (this.#inFlight() < UPDATE_WINDOW) {
      this.#post(this.#pending);
      this.#pending = undefined;
    } else {
      this.#flushTimer = setTimeout(() => this.#flushWhenRoom(), FLUSH_RETRY_MS);
    }
  }

  #inFlight(): number {
    return this.#posted - this.table.consumed(this.task.slot);
  }

  #post(partial: ToolResult): void {
    this.#posted++;
    const message: UpdateMessage = { runId: this.task.runId, partial };
    this.port.postMessage(message);
  }

  /** The last update is always delivered, and before the reply that carries the result. */
  #settle(): void {
    this.#settled = true;
    for (const cancel of this.#onSettle) cancel();
    this.#onSettle.clear();
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    if (this.#pending) this.#post(this.#pending);
    this.#pending = undefined;
  }
}
