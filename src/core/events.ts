import { fileURLToPath } from 'node:url';
import { ConfigErrors, errorMessage } from './errors.ts';
import type { ToolResult } from './tool.ts';
import type { ToolErrorCode } from './error-codes.ts';
import { ToolpoolTypeError } from './error-codes.ts';

export interface ToolStartEvent {
  type: 'tool_start';
  toolCallId: string;
  toolName: string;
  /** The arguments as the model sent them (parsed when they came as a JSON string). */
  args: unknown;
}

export interface ToolUpdateEvent {
  type: 'tool_update';
  toolCallId: string;
  toolName: string;
  partial: ToolResult;
}

export interface ToolEndEvent {
  type: 'tool_end';
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
  /**
   * Why the call failed, when `isError` is true: a stable code (see
   * ERROR_CODES and docs/errors.md). Match on it, never on the text.
   */
  errorCode?: ToolErrorCode;
  /** From the start of preparation to the moment the tool settled. */
  durationMs: number;
  /** true: the call was not run; its result is the one a ledger recorded when the call ran under the same key (run id, call id). */
  replayed?: boolean;
  /**
   * Milliseconds from the moment the executor handed the call to its runner
   * until the tool started running: waiting for a free worker (and, in the
   * process and sandbox tiers, for the child process to start). A worker's
   * first import of the tool module is not queue time: it counts as running.
   * 0 for inline tools and for calls that never reached a runner (invalid
   * arguments, unknown tool, refused or blocked calls).
   */
  queuedMs: number;
  /**
   * Milliseconds from the tool starting (in a worker: the worker taking the
   * call, including a first import of the module) to its result. 0 for
   * calls that never ran, such as a call aborted or timed out while queued.
   */
  runningMs: number;
  /**
   * CPU time (user + system) in milliseconds of the worker thread while it
   * ran the tool's `execute` (a first import of the module is not in it),
   * from `process.threadCpuUsage()`, which exists on Node 22+: undefined on
   * Node 20, for inline tools (the main thread's CPU is not the tool's) and
   * for calls that never ran or never returned. As fine as the operating
   * system counts it (on Linux often in steps of a few ms, so a short call
   * may show 0). It is the thread's CPU, not the call's: with several calls
   * sharing one worker at once it includes what the others used meanwhile.
   */
  cpuMs?: number;
  /**
   * The V8 heap used, in bytes, by the worker thread right after the call
   * (`v8.getHeapStatistics().used_heap_size`): the worker's heap, shared by
   * every call it ran or runs, not what this call allocated. Undefined for
   * inline tools and for calls that never ran or never returned.
   *
   * Both are read in the worker only when someone can see this event (a
   * listener, or the batch's `onEvent`, when the call was handed to its
   * worker): they cost a few µs of a trivial call.
   */
  heapUsedBytes?: number;
}

export type ToolEvent = ToolStartEvent | ToolUpdateEvent | ToolEndEvent;

/**
 * The executor's tool set changed while it runs: an MCP server it uses
 * announced `notifications/tools/list_changed` and listed its tools again.
 * `executor.definitions` (and the next batch) already show the new set
 * when this is delivered. Names are executor tool names.
 */
export interface ToolsChangedEvent {
  type: 'tools_changed';
  /** Tools that are new. */
  added: string[];
  /** Tools that are gone. */
  removed: string[];
  /** Tools still there whose definition (description, schema, title, hints) changed. */
  changed: string[];
}

/** The executor's events that are not about a call, by type (see `executor.on`). */
export interface ExecutorEvents {
  tools_changed: ToolsChangedEvent;
}

export type Listener<E> = (event: E) => void | Promise<void>;

const DELIVERED: Promise<void> = Promise.resolve();

/** Where a listener was subscribed: taken when it is, formatted only if it ever throws. */
interface Subscription {
  readonly addedAt: Error;
  reported: boolean;
}

/**
 * Delivers events to listeners strictly in emission order, awaiting each
 * listener before the next one, so a slow async listener can never see
 * events out of order. A listener that throws is skipped; by default the
 * first error of each listener is reported once, as a warning naming where
 * that listener was subscribed (later ones would repeat it for every event).
 *
 * When nothing is waiting and a listener returns no promise, it is called
 * at once, without a microtask per event: that keeps progress floods and
 * trivial calls cheap. Once a listener returns a promise, later events
 * queue behind it.
 */
export class OrderedEmitter<E> {
  readonly #listeners = new Map<Listener<E>, Subscription>();
  #tail: Promise<void> = DELIVERED;
  /** Deliveries queued behind a listener's promise. */
  #waiting = 0;

  /** `onListenerError`, when given, gets every error a listener throws instead of the report. */
  constructor(private readonly onListenerError?: (error: unknown) => void) {}

  subscribe(listener: Listener<E>): () => void {
    if (typeof listener !== 'function')
      throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', 'subscribe(listener): listener must be a function');
    // The stack is captured now and formatted only if the listener throws.
    if (!this.#listeners.has(listener))
      this.#listeners.set(listener, { addedAt: new Error('subscribed here'), reported: false });
    return () => void this.#listeners.delete(listener);
  }

  get hasListeners(): boolean {
    return this.#listeners.size > 0;
  }

  /** Resolves once this event (and every earlier one) reached all listeners. */
  emit(event: E, extra?: Listener<E>): Promise<void> {
    if (this.#listeners.size === 0 && !extra) return this.#tail;
    const listeners = extra ? [...this.#listeners.keys(), extra] : [...this.#listeners.keys()];
    if (this.#waiting === 0) return this.#deliverNow(event, listeners);
    return this.#queue(() => this.#deliverFrom(event, listeners, 0));
  }

  #deliverNow(event: E, listeners: Listener<E>[]): Promise<void> {
    for (let i = 0; i < listeners.length; i++) {
      const listener = listeners[i]!;
      let returned: void | Promise<void>;
      try {
        returned = listener(event);
      } catch (error) {
        this.#failed(listener, error);
        continue;
      }
      if (returned instanceof Promise) {
        const rest = i + 1;
        return this.#queue(() =>
          returned
            .catch((error: unknown) => this.#failed(listener, error))
            .then(() => this.#deliverFrom(event, listeners, rest)),
        );
      }
    }
    return DELIVERED;
  }

  #queue(delivery: () => Promise<void>): Promise<void> {
    this.#waiting++;
    this.#tail = this.#tail.then(delivery).finally(() => this.#waiting--);
    return this.#tail;
  }

  async #deliverFrom(event: E, listeners: Listener<E>[], from: number): Promise<void> {
    for (let i = from; i < listeners.length; i++) {
      try {
        await listeners[i]!(event);
      } catch (error) {
        this.#failed(listeners[i]!, error);
      }
    }
  }

  #failed(listener: Listener<E>, error: unknown): void {
    if (this.onListenerError) return this.onListenerError(error);
    const subscription = this.#listeners.get(listener);
    // A batch's own onEvent listener was not subscribed here: its errors are reported each time, without a place.
    if (subscription?.reported) return;
    if (subscription) subscription.reported = true;
    const where = subscription ? { addedAt: subscribedAt(subscription.addedAt), once: true } : { once: false };
    process.emitWarning(ConfigErrors.listenerThrew(errorMessage(error), where), 'ToolpoolListenerError');
  }
}

/** toolpool's own folder (src/ in a clone, dist/src/ in a package): its frames are not where a user subscribed. */
const OWN_SOURCES = [fileURLToPath(new URL('..', import.meta.url)), new URL('..', import.meta.url).href];

/** The first frame of the subscribe call's stack outside toolpool's sources: the user's line. */
function subscribedAt(addedAt: Error): string | undefined {
  const frames = (addedAt.stack ?? '')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().replace(/^at /, ''));
  return frames.find((frame) => !OWN_SOURCES.some((own) => frame.includes(own)));
}
