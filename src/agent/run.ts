import type { ElicitHandler } from '../core/elicitation.ts';
import type { ApprovalOptions, PendingApproval } from '../executor/approval.ts';
import type { BatchResult } from '../executor/batch.ts';
import type { Executor } from '../executor/executor.ts';
import { toolCallsOf, type AssistantMessage, type Message, type ToolCallContent } from '../core/messages.ts';
import type { Model, ModelStreamEvent } from '../core/model.ts';
import type { ToolResultMessage } from '../core/tool.ts';
import { AgentErrors, errorMessage } from '../core/errors.ts';
import type { AgentEndReason, AgentEvent } from './events.ts';
import { PartialAssistantMessage, withErrorMessage } from './partial-message.ts';
import { refuseCalls } from './refused-calls.ts';
import { messagesForModel, unansweredToolCalls } from './transcript.ts';
import type { ToolErrorCode } from '../core/error-codes.ts';

/** What a run needs from an executor (an `Executor` from `createExecutor`, or a stand-in). */
export type AgentExecutor = Pick<Executor, 'definitions' | 'executeBatch'>;

/** What one run needs from its agent. */
export interface RunContext {
  model: Model;
  executor: AgentExecutor;
  systemPrompt: string | undefined;
  maxTurns: number;
  /** The agent's run id: every batch is keyed by it in the executor's ledger. */
  runId: string;
  /** Answers the tools' ctx.elicit (the Agent's onElicit); absent: the executor's. */
  onElicit?: ElicitHandler;
  /** The agent's transcript; the run appends to it. */
  transcript: Message[];
  signal: AbortSignal;
  /** Removes and returns the next steering message(s), by the agent's steeringMode. */
  takeSteering(): Message[];
  hasSteering(): boolean;
  /** Removes and returns the next follow-up message(s), by the agent's followUpMode. */
  takeFollowUps(): Message[];
  hasFollowUps(): boolean;
  emit(event: AgentEvent): Promise<void>;
}

/** How a run begins: with new messages (a prompt), or with a paused batch a person has decided on. */
export type RunStart =
  | { messages: Message[] }
  | { resume: { message: AssistantMessage; approvals: ApprovalOptions } }
  /** A resume that left calls undecided: the run ends again at once. */
  | { stillPending: PendingApproval[] };

export interface RunEnd {
  reason: AgentEndReason;
  error?: string;
  hookStopReason?: string;
  /** With `reason: 'approval'`: the calls that wait for a person. */
  pending?: PendingApproval[];
}

export interface RunOutcome {
  /** The messages the run added. */
  messages: Message[];
  end: RunEnd;
}

/** How the tool calls of one turn went. */
interface ToolPhase {
  results: ToolResultMessage[];
  batch?: BatchResult;
  /** The executor rejected the batch. */
  failure?: string;
  /** The batch waits for a person; no call ran. */
  pending?: PendingApproval[];
}

/** After a turn: the run ends, or the next turn starts with these messages. */
type TurnOutcome = { end: RunEnd } | { next: Message[] };

const ABORTED = Symbol('aborted');

/** The agent pauses every batch that needs a person, instead of refusing its calls. */
const PAUSE: ApprovalOptions = { undecided: 'pause' };

/**
 * One `prompt()` or `resume()`: turns of model → tool calls → batch →
 * results until the model answers without tools (and no follow-up
 * waits), a batch terminates, a hook stops the run, a batch needs a
 * person's approval, `maxTurns` is reached, the model fails, or the caller
 * aborts. Every event goes through `emit`, awaited, so listeners see one
 * ordered chain.
 */
export class AgentRun {
  readonly #added: Message[] = [];
  #turn = 0;

  constructor(private readonly ctx: RunContext) {}

  /** Never rejects. */
  async run(start: RunStart): Promise<RunOutcome> {
    let end: RunEnd;
    try {
      await this.#emit({ type: 'agent_start' });
      end = await this.#runTurns(start);
    } catch (error) {
      end = { reason: 'error', error: AgentErrors.internal(errorMessage(error)) };
    }
    // A batch that waits for a person keeps its calls open: resume() answers them.
    if (end.reason !== 'approval') await this.#answerOpenToolCalls(end);
    await this.#endRun(end);
    return { messages: [...this.#added], end };
  }

  async #runTurns(start: RunStart): Promise<RunEnd> {
    if ('stillPending' in start) return { reason: 'approval', pending: start.stillPending };
    let outcome =
      'resume' in start
        ? await this.#resumeTurn(start.resume.message, start.resume.approvals)
        : await this.#runTurn(start.messages);
    while ('next' in outcome) outcome = await this.#runTurn(outcome.next);
    return outcome.end;
  }

  /** One turn: the incoming messages, a model answer, its tool calls. */
  async #runTurn(incoming: Message[]): Promise<TurnOutcome> {
    await this.#startTurn();
    for (const message of incoming) await this.#addMessage(message);
    const message = await this.#streamAssistantMessage();
    const tools = await this.#runToolCalls(message, PAUSE);
    return this.#endTurn(message, tools);
  }

  /** The turn a paused batch belongs to, carried on after a person decided: the batch runs, the loop goes on. */
  async #resumeTurn(message: AssistantMessage, approvals: ApprovalOptions): Promise<TurnOutcome> {
    await this.#startTurn();
    const tools = await this.#runToolCalls(message, approvals);
    return this.#endTurn(message, tools);
  }

  async #startTurn(): Promise<void> {
    this.#turn++;
    await this.#emit({ type: 'turn_start', turn: this.#turn });
  }

  async #endTurn(message: AssistantMessage, tools: ToolPhase): Promise<TurnOutcome> {
    await this.#emit({ type: 'turn_end', turn: this.#turn, message, toolResults: tools.results });
    return this.#decideNext(message, tools);
  }

  // ---------------------------------------------------------------- model turn

  async #streamAssistantMessage(): Promise<AssistantMessage> {
    const partial = new PartialAssistantMessage(this.ctx.model.name);
    await this.#emit({ type: 'message_start', message: partial.snapshot() });
    let message: AssistantMessage;
    try {
      message = withErrorMessage(await this.#consumeModelStream(partial));
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
  async #runToolCalls(message: AssistantMessage, approvals: ApprovalOptions): Promise<ToolPhase> {
    const calls = toolCallsOf(message);
    if (calls.length === 0) return { results: [] };
    const phase = await this.#toolPhase(message, calls, approvals);
    for (const result of phase.results) await this.#addMessage(result);
    return phase;
  }

  async #toolPhase(
    message: AssistantMessage,
    calls: ToolCallContent[],
    approvals: ApprovalOptions,
  ): Promise<ToolPhase> {
    switch (message.stopReason) {
      case 'length':
        return {
          results: await this.#refuseCalls(
            calls,
            (call) => AgentErrors.argumentsCutOff(call.name),
            'INVALID_ARGUMENTS',
          ),
        };
      case 'aborted':
        return { results: await this.#refuseCalls(calls, AgentErrors.notRunAborted, 'ABORTED') };
      case 'error': {
        const text = AgentErrors.notRunModelFailed(message.errorMessage ?? AgentErrors.modelTurnFailed());
        return { results: await this.#refuseCalls(calls, () => text, 'STOPPED') };
      }
      default:
        return this.#executeBatch(calls, approvals);
    }
  }

  async #executeBatch(calls: ToolCallContent[], approvals: ApprovalOptions): Promise<ToolPhase> {
    let batch: BatchResult;
    try {
      batch = await this.ctx.executor.executeBatch(
        calls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
        {
          signal: this.ctx.signal,
          onEvent: (event) => this.ctx.emit(event),
          approvals,
          runId: this.ctx.runId,
          ...(this.ctx.onElicit ? { onElicit: this.ctx.onElicit } : {}),
        },
      );
    } catch (error) {
      const failure = AgentErrors.executorFailed(errorMessage(error));
      return { results: await this.#refuseCalls(calls, () => failure, 'FAILED'), failure };
    }
    if (batch.pending && batch.pending.length > 0) return { results: [], pending: batch.pending };
    return { results: batch.results, batch };
  }

  /** Answers calls that will not run with an error result each, with their tool events (see refuseCalls). */
  async #refuseCalls(
    calls: readonly ToolCallContent[],
    text: (call: ToolCallContent) => string,
    code: ToolErrorCode,
  ): Promise<ToolResultMessage[]> {
    const { results, events } = refuseCalls(calls, text, code);
    for (const event of events) await this.#emit(event);
    return results;
  }

  // ---------------------------------------------------------------- what next

  #decideNext(message: AssistantMessage, tools: ToolPhase): TurnOutcome {
    if (tools.failure !== undefined) return end({ reason: 'error', error: tools.failure });
    if (message.stopReason === 'error')
      return end({ reason: 'error', error: message.errorMessage ?? AgentErrors.modelTurnFailed() });
    if (message.stopReason === 'aborted' || this.ctx.signal.aborted) return end({ reason: 'aborted' });
    if (tools.pending) return end({ reason: 'approval', pending: tools.pending });
    if (tools.batch?.terminate) return end({ reason: 'terminate' });
    if (tools.batch?.stopped) {
      return end({
        reason: 'hookStop',
        ...(tools.batch.stopReason !== undefined ? { hookStopReason: tools.batch.stopReason } : {}),
      });
    }
    const wouldStop = tools.results.length === 0;
    if (wouldStop) {
      if (message.stopReason === 'length') return end({ reason: 'length' });
      // A steer() that arrived while the model wrote its answer, or a queued followUp(), gets one more turn.
      if (!this.ctx.hasSteering() && !this.ctx.hasFollowUps()) return end({ reason: 'stop' });
    }
    if (this.#turn >= this.ctx.maxTurns) return end({ reason: 'maxTurns' });
    return { next: this.#nextMessages(wouldStop) };
  }

  /** Steering first; follow-ups only where the run would otherwise have stopped (pi-agent-core's order). */
  #nextMessages(wouldStop: boolean): Message[] {
    const steering = this.ctx.takeSteering();
    if (steering.length > 0 || !wouldStop) return steering;
    return this.ctx.takeFollowUps();
  }

  // ---------------------------------------------------------------- end of run

  /** Safety net: whatever ended the run, every tool call in the transcript gets a result. */
  async #answerOpenToolCalls(end: RunEnd): Promise<void> {
    const text =
      end.reason === 'aborted' ? AgentErrors.notRunAborted() : AgentErrors.notRunRunEnded(end.error ?? end.reason);
    const open = unansweredToolCalls(this.#added);
    if (open.length === 0) return;
    for (const result of await this.#refuseCalls(open, () => text, end.reason === 'aborted' ? 'ABORTED' : 'STOPPED'))
      await this.#addMessage(result);
  }

  async #endRun(end: RunEnd): Promise<void> {
    await this.#emit({
      type: 'agent_end',
      messages: [...this.#added],
      reason: end.reason,
      turns: this.#turn,
      ...(end.error !== undefined ? { error: end.error } : {}),
      ...(end.hookStopReason !== undefined ? { hookStopReason: end.hookStopReason } : {}),
      ...(end.pending !== undefined ? { pending: end.pending } : {}),
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

function end(runEnd: RunEnd): TurnOutcome {
  return { end: runEnd };
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
