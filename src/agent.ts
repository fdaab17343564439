import { AgentErrors } from './errors.ts';
import type { AgentEvent } from './agent/events.ts';
import { AgentRun, type AgentExecutor } from './agent/run.ts';
import { userMessage } from './agent/transcript.ts';
import { OrderedEmitter, type Listener } from './events.ts';
import type { Message, UserMessage } from './messages.ts';
import type { Model } from './model.ts';
import type { Content } from './tool.ts';

export type {
  AgentEndEvent,
  AgentEndReason,
  AgentEvent,
  AgentStartEvent,
  MessageEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  ModelDelta,
  TurnEndEvent,
  TurnStartEvent,
} from './agent/events.ts';
export type { AgentExecutor } from './agent/run.ts';

/** Default for `maxTurns`: a guard against a model that never stops calling tools. */
export const DEFAULT_MAX_TURNS = 50;

export interface AgentOptions {
  model: Model;
  /** Runs the tool calls; its `definitions` are the tools shown to the model. */
  executor: AgentExecutor;
  systemPrompt?: string;
  /** Model turns per `prompt()` at most (default 50); the run then ends with reason `maxTurns`. */
  maxTurns?: number;
  /** A transcript to continue from. */
  messages?: Message[];
  /** Called when a listener throws (default: a process warning). The run goes on either way. */
  onListenerError?: (error: unknown) => void;
}

/**
 * The agent loop (S14): `prompt(text)` runs model turn → tool calls →
 * `executor.executeBatch` → results → next turn until the model answers
 * without tools, a batch terminates, a hook stops the run, `maxTurns` is
 * reached, the model fails, or `abort()` is called.
 *
 * One run at a time: `prompt()` while a run is active rejects; use
 * `steer(text)` to add a message to the active run.
 */
export class Agent {
  readonly #model: Model;
  readonly #executor: AgentExecutor;
  readonly #systemPrompt: string | undefined;
  readonly #maxTurns: number;
  readonly #transcript: Message[];
  readonly #events: OrderedEmitter<AgentEvent>;
  #steering: UserMessage[] = [];
  #active: AbortController | undefined;

  constructor(options: AgentOptions) {
    checkOptions(options);
    this.#model = options.model;
    this.#executor = options.executor;
    this.#systemPrompt = options.systemPrompt;
    this.#maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.#transcript = [...(options.messages ?? [])];
    this.#events = new OrderedEmitter<AgentEvent>(options.onListenerError);
  }

  /** The transcript so far (a copy). */
  get messages(): Message[] {
    return [...this.#transcript];
  }

  get isRunning(): boolean {
    return this.#active !== undefined;
  }

  /**
   * Listeners are awaited one after another, in event order, together with the
   * executor's tool events of this agent's batches. A listener that throws is
   * reported and skipped.
   */
  subscribe(listener: Listener<AgentEvent>): () => void {
    return this.#events.subscribe(listener);
  }

  /**
   * Runs the agent on a user message. Resolves to the messages the run added
   * (prompt, steering messages, assistant messages, tool results) once
   * `agent_end` reached every listener; it does not reject when the run is
   * aborted, hits `maxTurns` or the model fails (see `agent_end.reason`).
   * Rejects only when a run is already active.
   */
  async prompt(input: string | Content[]): Promise<Message[]> {
    if (this.#active) throw new Error(AgentErrors.busy());
    const prompt = userMessage(input, 'prompt');
    const first = [...this.#takeSteering(), prompt];
    const controller = new AbortController();
    this.#active = controller;
    try {
      const run = new AgentRun({
        model: this.#model,
        executor: this.#executor,
        systemPrompt: this.#systemPrompt,
        maxTurns: this.#maxTurns,
        transcript: this.#transcript,
        signal: controller.signal,
        takeSteering: () => this.#takeSteering(),
        hasSteering: () => this.#steering.length > 0,
        emit: (event) => this.#events.emit(event),
      });
      return await run.run(first);
    } finally {
      this.#active = undefined;
    }
  }

  /**
   * Adds a user message to the active run: it enters the transcript after the
   * current batch, before the next model turn; sent while the model writes its
   * final answer, it gets one more turn. A message the run could not answer
   * (it ended first) and one sent while idle wait for the next `prompt()`,
   * ahead of its text.
   */
  steer(input: string | Content[]): void {
    this.#steering.push(userMessage(input, 'steer'));
  }

  /**
   * Stops the active run: the model stream is cut off (its message ends with
   * `stopReason: 'aborted'`), running tools get their signal and are killed
   * after the grace period, calls not started are answered with an error
   * result. `prompt()` then resolves. Does nothing when idle.
   */
  abort(): void {
    this.#active?.abort();
  }

  #takeSteering(): UserMessage[] {
    return this.#steering.splice(0);
  }
}

function checkOptions(options: AgentOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(AgentErrors.badOption('(options)', 'must be an object { model, executor }'));
  if (typeof options.model?.stream !== 'function') throw new TypeError(AgentErrors.badOption('model', 'must be a Model with a stream(request) method'));
  if (typeof options.executor?.executeBatch !== 'function' || !Array.isArray(options.executor.definitions)) {
    throw new TypeError(AgentErrors.badOption('executor', 'must be an executor from createExecutor()'));
  }
  if (options.maxTurns !== undefined && !((Number.isInteger(options.maxTurns) || options.maxTurns === Infinity) && options.maxTurns >= 1)) {
    throw new TypeError(AgentErrors.badOption('maxTurns', 'must be an integer >= 1 (or Infinity)'));
  }
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== 'string') {
    throw new TypeError(AgentErrors.badOption('systemPrompt', 'must be a string'));
  }
  if (options.messages !== undefined && !Array.isArray(options.messages)) throw new TypeError(AgentErrors.badOption('messages', 'must be an array of messages'));
}
