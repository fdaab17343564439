import type { BatchResult } from '../batch.ts';
import type { Executor } from '../executor.ts';
import { toolCallsOf, type AssistantMessage, type Message, type ToolCallContent } from '../messages.ts';
import type { Model, ModelStreamEvent } from '../model.ts';
import type { ToolResultMessage } from '../tool.ts';
import { AgentErrors, errorMessage } from '../errors.ts';
import type { AgentEndReason, AgentEvent } from './events.ts';
import { PartialAssistantMessage } from './partial-message.ts';
import { messagesForModel, notRunResult, unansweredToolCalls } from './transcript.ts';

/** What a run needs from an executor (an `Executor` from `createExecutor`, or a stand-in). */
export type AgentExecutor = Pick<Executor, 'definitions' | 'executeBatch'>;

/** What one run needs from its agent. */
export interface RunContext {
  model: Model;
  executor: AgentExecutor;
  systemPrompt: string | undefined;
  maxTurns: number;
  /** The agent's transcript; the run appends to it. */
  transcript: Message[];
  signal: AbortSignal;
  /** Removes and returns the steering messages queued so far. */
  takeSteering(): Message[];
  hasSteering(): boolean;
  emit(event: AgentEvent): Promise<void>;
}

interface RunEnd {
  reason: AgentEndReason;
  error?: string;
  hookStopReason?: string;
}

/** How the tool calls of one turn went. */
interface ToolPhase {
  results: ToolResultMessage[];
  batch?: BatchResult;
  /** The executor rejected the batch. */
  failure?: string;
}

const ABORTED = Symbol('aborted');

/**
 * One `prompt()`: turns of model → tool calls → batch → results (S14) until
 * the model answers without tools, a batch terminates, a hook stops the run,
 * `maxTurns` is reached, the model fails, or the caller aborts. Every event
 * goes through `emit`, awaited, so listeners see one ordered chain.
 */
export class AgentRun {
  readonly #added: Message[] = [];
  #turn = 0;

  constructor(private readonly ctx: RunContext) {}

  /** Resolves to the messages the run added; never rejects. */
  async run(firstMessages: Message[]): Promise<Message[]> {
    let end: RunEnd;
    try {
      await this.#emit({ type: 'agent_start' });
      end = await this.#runTurns(firstMessages);
    } catch (error) {
      end = { reason: 'error', error: AgentErrors.internal(errorMessage(error)) };
    }
    await this.#answerOpenToolCalls(end);
    await this.#endRun(end);
    return [...this.#added];
  }

  async #runTurns(firstMessages: Message[]): Promise<RunEnd> {
    let incoming = firstMessages;
    for (;;) {
      const end = await this.#runTurn([...incoming, ...this.ctx.takeSteering()]);
      if (end) return end;
      incoming = [];
    }
  }

  /** One turn; returns how the run ends, or nothing when another turn follows. */
  async #runTurn(incoming: Message[]): Promise<RunEnd | undefined> {
    this.#turn++;
    await this.#emit({ type: 'turn_start', turn: this.#turn });
    for (const message of incoming) await this.#addMessage(message);
    const message = await this.#streamAssistantMessage();
    const tools = await this.#runToolCalls(message);
    await this.#emit({ type: 'turn_end', turn: this.#turn, message, toolResults: tools.results });
    return this.#decideNext(message, tools);
  }

  // ---------------------------------------------------------------- model turn

  async #streamAssistantMessage(): Promise<AssistantMessage> {
    const partial = new PartialAssistantMessage(this.ctx.model.name);
    await this.#emit({ type: 'message_start', message: partial.snapshot() });
    let message: AssistantMessage;
    try {
      message = await this.#consumeModelStream(partial);
    } catch (error) {
      message = partial.finish('error', AgentErrors.modelThrew(errorMessage(error)));
    }
    this.#append(message);
    await this.#emit({ type: 'message_end', message });
    return message;
  }

  /**
   * Reads the model's stream until its `done` event. An abort ends the turn at
   * once with what has arrived, even if the model does not honour its signal.
   */
  async #consumeModelStream(partial: PartialAssistantMessage): Promise<AssistantMessage> {
    const { model, executor, systemPrompt, signal } = this.ctx;
    const request = {
      ...(systemPrompt !== undefined ? { systemPrompt } : {}),
      messages: messagesForModel(this.ctx.transcript),
      tools: executor.definitions,
      signal,
    };
    if (signal.aborted) return partial.finish('aborted');
    const iterator = model.stream(request)[Symbol.asyncIterator]();
    const aborted = whenAborted(signal);
    try {
      for (;;) {
        const next = signal.aborted ? ABORTED : await Promise.race([iterator.next(), aborted.promise]);
        if (next === ABORTED) {
          closeQuietly(iterator);
          return partial.finish('aborted');
        }
        if (next.done) return partial.finish('error', AgentErrors.modelEndedWithoutDone());
        const event = next.value;
        if (event.type === 'done') {
          closeQuietly(iterator);
          return event.message;
        }
        partial.apply(event);
        await this.#emit({ type: 'message_update', message: partial.snapshot(), delta: event });
      }
    } finally {
      aborted.dispose();
    }
  }

  // ---------------------------------------------------------------- tool calls

  /** Runs the turn's tool calls through the executor, or answers them with an error when they must not run. */
  async #runToolCalls(message: AssistantMessage): Promise<ToolPhase> {
    const calls = toolCallsOf(message);
    if (calls.length === 0) return { results: [] };
    const phase = await this.#toolPhase(message, calls);
    for (const result of phase.results) await this.#addMessage(result);
    return phase;
  }

  async #toolPhase(message: AssistantMessage, calls: ToolCallContent[]): Promise<ToolPhase> {
    const notRun = (text: (call: ToolCallContent) => string): ToolPhase => ({
      results: calls.map((call) => notRunResult(call, text(call))),
    });
    switch (message.stopReason) {
      case 'length':
        return notRun((call) => AgentErrors.argumentsCutOff(call.name));
      case 'aborted':
        return notRun(AgentErrors.notRunAborted);
      case 'error':
        return notRun(() => AgentErrors.notRunModelFailed(message.errorMessage ?? AgentErrors.modelTurnFailed()));
      default:
        return this.#executeBatch(calls);
    }
  }

  async #executeBatch(calls: ToolCallContent[]): Promise<ToolPhase> {
    try {
      const batch = await this.ctx.executor.executeBatch(
        calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
        { signal: this.ctx.signal, onEvent: (event) => this.ctx.emit(event) },
      );
      return { results: batch.results, batch };
    } catch (error) {
      const failure = AgentErrors.executorFailed(errorMessage(error));
      return { results: calls.map((call) => notRunResult(call, failure)), failure };
    }
  }

  // ---------------------------------------------------------------- what next

  #decideNext(message: AssistantMessage, tools: ToolPhase): RunEnd | undefined {
    if (tools.failure !== undefined) return { reason: 'error', error: tools.failure };
    if (message.stopReason === 'error') return { reason: 'error', error: message.errorMessage ?? AgentErrors.modelTurnFailed() };
    if (message.stopReason === 'aborted' || this.ctx.signal.aborted) return { reason: 'aborted' };
    if (tools.batch?.terminate) return { reason: 'terminate' };
    if (tools.batch?.stopped) {
      return { reason: 'hookStop', ...(tools.batch.stopReason !== undefined ? { hookStopReason: tools.batch.stopReason } : {}) };
    }
    if (tools.results.length === 0) {
      if (message.stopReason === 'length') return { reason: 'length' };
      // A steer() that arrived while the model wrote its answer is answered in one more turn.
      if (!this.ctx.hasSteering()) return { reason: 'stop' };
    }
    if (this.#turn >= this.ctx.maxTurns) return { reason: 'maxTurns' };
    return undefined;
  }

  // ---------------------------------------------------------------- end of run

  /** Safety net: whatever ended the run, every tool call in the transcript gets a result. */
  async #answerOpenToolCalls(end: RunEnd): Promise<void> {
    const text = end.reason === 'aborted' ? AgentErrors.notRunAborted() : AgentErrors.notRunRunEnded(end.error ?? end.reason);
    for (const call of unansweredToolCalls(this.#added)) await this.#addMessage(notRunResult(call, text));
  }

  async #endRun(end: RunEnd): Promise<void> {
    await this.#emit({
      type: 'agent_end',
      messages: [...this.#added],
      reason: end.reason,
      turns: this.#turn,
      ...(end.error !== undefined ? { error: end.error } : {}),
      ...(end.hookStopReason !== undefined ? { hookStopReason: end.hookStopReason } : {}),
    });
  }

  // ---------------------------------------------------------------- plumbing

  async #addMessage(message: Message): Promise<void> {
    await this.#emit({ type: 'message_start', message });
    this.#append(message);
    await this.#emit({ type: 'message_end', message });
  }

  #append(message: Message): void {
    this.ctx.transcript.push(message);
    this.#added.push(message);
  }

  #emit(event: AgentEvent): Promise<void> {
    return this.ctx.emit(event);
  }
}

function whenAborted(signal: AbortSignal): { promise: Promise<typeof ABORTED>; dispose: () => void } {
  let onAbort!: () => void;
  const promise = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/** Lets the model's generator run its cleanup without waiting for it (it may be stuck awaiting). */
function closeQuietly(iterator: AsyncIterator<ModelStreamEvent>): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  } catch {
    // A synchronous throw from return() changes nothing for the run.
  }
}
