import type { MessagePort } from 'node:worker_threads';
import { encodeToolResult, type Encoded } from '../src/pool/payload.ts';
import type { CallTable } from '../src/pool/call-table.ts';
import type { ExecuteReply, ExecuteTask, UpdateMessage } from '../src/pool/protocol.ts';
import type { ToolContext, ToolResult } from '../src/tool.ts';
import { errorMessage } from '../src/errors.ts';
import { stopError, type StopReason } from '../src/stop-timer.ts';

/**
 * How many updates may be in flight (posted, not yet consumed by the host)
 * before new ones are coalesced. While the host keeps up every update is
 * posted; when it falls behind, only the latest waiting one is kept, and it
 * is always posted before the result.
 */
const UPDATE_WINDOW = 64;
const FLUSH_RETRY_MS = 1;

/** One call running in this worker: its context, its update relay and how it ends. */
export class RunningCall {
  readonly #controller = new AbortController();
  readonly #failure: Promise<never>;
  #fail!: (error: unknown) => void;
  #settled = false;
  #posted = 0;
  #pending: Uint8Array | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  readonly context: ToolContext;

  constructor(
    readonly task: ExecuteTask,
    private readonly threadId: number,
    private readonly port: MessagePort,
    private readonly table: CallTable,
    host: ToolContext['host'],
  ) {
    this.#failure = new Promise<never>((_, reject) => (this.#fail = reject));
    this.#failure.catch(() => {}); // observed through race(); never an unhandled rejection
    this.context = {
      callId: task.callId,
      signal: this.#controller.signal,
      onUpdate: (partial) => this.#onUpdate(partial),
      host,
    };
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** Runs `execute`, failing early if an error is attributed to this call (uncaught, oversized update). */
  async run(execute: () => ToolResult | Promise<ToolResult>): Promise<ExecuteReply> {
    this.table.markStarted(this.task.slot);
    let encoded: Encoded;
    try {
      const value = await Promise.race([Promise.resolve().then(execute), this.#failure]);
      encoded = encodeToolResult(value, 'result', this.task.maxResultBytes);
    } catch (error) {
      encoded = { ok: false, error: errorMessage(error) };
    }
    this.#settle();
    const { threadId } = this;
    const updates = this.#posted;
    return encoded.ok
      ? { ok: true, result: encoded.bytes, threadId, updates }
      : { ok: false, error: encoded.error, threadId, updates };
  }

  /** An error raised by this call's code outside `execute`'s promise (a timer, a late rejection). */
  fail(error: unknown): void {
    this.#fail(error);
  }

  abort(reason: StopReason): void {
    this.#controller.abort(stopError(reason));
  }

  #onUpdate(partial: ToolResult): void {
    if (this.#settled) return; // S10: valid only during the call
    const encoded = encodeToolResult(partial, 'update', this.task.maxResultBytes);
    if (!encoded.ok) return this.fail(new Error(encoded.error));
    if (this.#inFlight() < UPDATE_WINDOW) {
      this.#post(encoded.bytes);
    } else {
      this.#pending = encoded.bytes; // latest wins
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

  #post(bytes: Uint8Array): void {
    this.#posted++;
    const message: UpdateMessage = { runId: this.task.runId, bytes };
    this.port.postMessage(message);
  }

  /** The last update is always delivered, and before the reply that carries the result. */
  #settle(): void {
    this.#settled = true;
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    if (this.#pending) this.#post(this.#pending);
    this.#pending = undefined;
  }
}
