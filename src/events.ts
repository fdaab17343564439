import type { ToolResult } from './tool.ts';

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
  /** From the start of preparation to the moment the tool settled. */
  durationMs: number;
}

export type ToolEvent = ToolStartEvent | ToolUpdateEvent | ToolEndEvent;

export type Listener<E> = (event: E) => void | Promise<void>;

/**
 * Delivers events to listeners strictly in emission order, awaiting each
 * listener before the next one, so a slow async listener can never see
 * events out of order. A listener that throws is reported and skipped.
 */
export class OrderedEmitter<E> {
  readonly #listeners = new Set<Listener<E>>();
  #tail: Promise<void> = Promise.resolve();

  constructor(private readonly onListenerError: (error: unknown) => void = reportListenerError) {}

  subscribe(listener: Listener<E>): () => void {
    if (typeof listener !== 'function') throw new TypeError('subscribe(listener): listener must be a function');
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  get hasListeners(): boolean {
    return this.#listeners.size > 0;
  }

  /** Resolves once this event (and every earlier one) reached all listeners. */
  emit(event: E, extra?: Listener<E>): Promise<void> {
    if (this.#listeners.size === 0 && !extra) return this.#tail;
    const listeners = extra ? [...this.#listeners, extra] : [...this.#listeners];
    this.#tail = this.#tail.then(() => this.#deliver(event, listeners));
    return this.#tail;
  }

  async #deliver(event: E, listeners: Listener<E>[]): Promise<void> {
    for (const listener of listeners) {
      try {
        await listener(event);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}

function reportListenerError(error: unknown): void {
  process.emitWarning(`toolpool: an event listener threw: ${error instanceof Error ? error.stack : String(error)}`);
}
