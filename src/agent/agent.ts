import type { ElicitHandler } from '../core/elicitation.ts';
import { randomUUID } from 'node:crypto';
import { AgentErrors } from '../core/errors.ts';
import { decide, pausedBatch, type ApprovalDecisions, type PausedBatch } from './approvals.ts';
import type { AgentEvent } from './events.ts';
import { MessageQueue, type QueueMode } from './queue.ts';
import { AgentRun, type AgentExecutor, type RunStart } from './run.ts';
import {
  readSnapshot,
  takeSnapshot,
  type AgentSnapshot,
  type PendingCallCheck,
  type SnapshotSecret,
} from './snapshot.ts';
import { refuseCalls } from './refused-calls.ts';
import { userMessage } from './transcript.ts';
import { OrderedEmitter, type Listener } from '../core/events.ts';
import { toolCallsOf, type AssistantMessage, type Message } from '../core/messages.ts';
import type { Model } from '../core/model.ts';
import type { Content } from '../core/tool.ts';
import { CHECK_PENDING, type PendingApproval, type PendingCheckable } from '../executor/approval.ts';
import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';

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
} from './events.ts';
export type { AgentExecutor } from './run.ts';
export type { ApprovalDecisions } from './approvals.ts';
export type { QueueMode } from './queue.ts';
export type { AgentSnapshot } from './snapshot.ts';

/** Default for `maxTurns`: a guard against a model that never stops calling tools. */
export const DEFAULT_MAX_TURNS = 50;

export interface AgentOptions {
  model: Model;
  /** Runs the tool calls; its `definitions` are the tools shown to the model. */
  executor: AgentExecutor;
  systemPrompt?: string;
  /** Model turns per `prompt()` or `resume()` at most (default 50); the run then ends with reason `maxTurns`. */
  maxTurns?: number;
  /** A transcript to continue from. */
  messages?: Message[];
  /** State from `agent.snapshot()` (transcript, queues, calls waiting for approval), as after a restart. Not with `messages`. */
  snapshot?: AgentSnapshot;
  /**
   * A secret of the host's: `snapshot()` then carries an integrity check
   * (HMAC-SHA256) keyed by it, and a snapshot given here must carry a valid
   * one, so a snapshot changed where it was stored (a file a tool could
   * write, a database row) is refused instead of resumed.
   */
  snapshotSecret?: SnapshotSecret;
  /**
   * The run id this agent's tool calls are keyed by in the executor's ledger
   * (default: a random UUID; a snapshot carries it and restores it): a call
   * that ran under it is never run again, in this process or, with a shared
   * ledger, in another. Give your own to tie the agent to a job of yours.
   */
  runId?: string;
  /** How queued `steer()` messages reach the model: one per turn (default) or all at once. */
  steeringMode?: QueueMode;
  /** How queued `followUp()` messages reach the model: one each time the run would stop (default) or all at once. */
  followUpMode?: QueueMode;
  /** Called when a listener throws (default: a process warning). The run goes on either way. */
  onListenerError?: (error: unknown) => void;
  /**
   * Answers the tools' `ctx.elicit` questions during this agent's runs, in
   * place of the executor's `onElicit` (see docs/elicitation.md).
   */
  onElicit?: ElicitHandler;
}

/**
 * The agent loop: `prompt(text)` runs model turn → tool calls →
 * `executor.executeBatch` → results → next turn until the model answers
 * without tools, a batch terminates, a hook stops the run, a call needs a
 * person's approval, `maxTurns` is reached, the model fails, or `abort()`
 * is called.
 *
 * One run at a time: `prompt()` while a run is active rejects; use
 * `steer(text)` or `followUp(text)` to add to the active run.
 */
export class Agent {
  readonly #model: Model;
  readonly #executor: AgentExecutor;
  readonly #systemPrompt: string | undefined;
  readonly #maxTurns: number;
  readonly #transcript: Message[];
  readonly #events: OrderedEmitter<AgentEvent>;
  readonly #steering: MessageQueue;
  readonly #followUps: MessageQueue;
  /** The batch that waits for a person, if any; its calls are the last message's. */
  #paused: PausedBatch | undefined;
  #active: AbortController | undefined;
  readonly #snapshotSecret: SnapshotSecret | undefined;
  readonly #runId: string;
  readonly #onElicit: ElicitHandler | undefined;

  constructor(options: AgentOptions) {
    checkOptions(options);
    this.#snapshotSecret = options.snapshotSecret;
    this.#onElicit = options.onElicit;
    const state =
      options.snapshot !== undefined
        ? readSnapshot(options.snapshot, options.snapshotSecret, pendingCheckOf(options.executor))
        : undefined;
    this.#model = options.model;
    this.#executor = options.executor;
    this.#systemPrompt = options.systemPrompt;
    this.#maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
    this.#transcript = [...(state?.messages ?? options.messages ?? [])];
    this.#steering = new MessageQueue(options.steeringMode ?? 'one-at-a-time', state?.steering);
    this.#followUps = new MessageQueue(options.followUpMode ?? 'one-at-a-time', state?.followUps);
    this.#paused = state?.approval;
    this.#runId = state?.runId ?? options.runId ?? randomUUID();
    this.#events = new OrderedEmitter<AgentEvent>(options.onListenerError);
  }

  /** The run id its tool calls are keyed by in the executor's ledger (see `AgentOptions.runId`). */
  get runId(): string {
    return this.#runId;
  }

  /** The transcript so far (a copy). */
  get messages(): Message[] {
    return [...this.#transcript];
  }

  get isRunning(): boolean {
    return this.#active !== undefined;
  }

  /** The calls that wait for a person's approval (empty when none do); a copy, so editing it changes nothing. */
  get pendingApprovals(): PendingApproval[] {
    return structuredClone(this.#paused?.pending ?? []);
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
   * (prompt, steering and follow-up messages, assistant messages, tool
   * results) once `agent_end` reached every listener; it does not reject when
   * the run is aborted, hits `maxTurns`, pauses for approval or the model
   * fails (see `agent_end.reason`). Rejects when a run is already active or
   * calls wait for approval.
   */
  async prompt(input: string | Content[]): Promise<Message[]> {
    if (this.#active) throw new ToolpoolError('TOOLPOOL_ERR_AGENT_STATE', AgentErrors.busy());
    if (this.#paused)
      throw new ToolpoolError(
        'TOOLPOOL_ERR_AGENT_STATE',
        AgentErrors.pendingApprovals(this.#paused.pending.map((call) => call.toolCallId)),
      );
    const prompt = userMessage(input, 'prompt');
    return this.#run({ messages: [...this.#steering.take(), prompt] });
  }

  /**
   * Carries on a run that ended with reason `'approval'`: approved calls and
   * calls that needed no approval run, rejected ones get an error result
   * carrying the reason, all in source order with their events, and the
   * loop goes on. A pending call left undecided stays pending: the run ends
   * with `'approval'` again. Rejects, changing nothing, for an id that is
   * not pending. Resolves like `prompt()`.
   */
  async resume(decisions: ApprovalDecisions): Promise<Message[]> {
    if (this.#active) throw new ToolpoolError('TOOLPOOL_ERR_AGENT_STATE', AgentErrors.resumeBusy());
    if (!this.#paused) throw new ToolpoolError('TOOLPOOL_ERR_AGENT_STATE', AgentErrors.nothingToResume());
    const paused = decide(this.#paused, decisions);
    if (paused.pending.length > 0) {
      this.#paused = paused;
      return this.#run({ stillPending: paused.pending }, paused);
    }
    this.#paused = undefined;
    const approvals = { approved: paused.approved, rejected: paused.rejected, undecided: 'pause' as const };
    return this.#run({ resume: { message: this.#transcript.at(-1) as AssistantMessage, approvals } }, paused);
  }

  /**
   * Adds a user message to the active run: it enters the transcript after the
   * current batch, before the next model turn (one per turn with
   * `steeringMode: 'one-at-a-time'`); sent while the model writes its final
   * answer, it gets one more turn. A message the run could not answer (it
   * ended first) and one sent while idle wait for the next `prompt()`, ahead
   * of its text.
   */
  steer(input: string | Content[]): void {
    this.#steering.push(userMessage(input, 'steer'));
  }

  /**
   * Queues a user message for when the agent would otherwise stop (the
   * model answered without tool calls): it is delivered then, and the run
   * goes on with another turn. Sent while idle, it waits for the next run.
   */
  followUp(input: string | Content[]): void {
    this.#followUps.push(userMessage(input, 'followUp'));
  }

  /**
   * Stops the active run: the model stream is cut off (its message ends with
   * `stopReason: 'aborted'`), running tools get their signal and are killed
   * after the grace period, calls not started are answered with an error
   * result. `prompt()` then resolves. While calls wait for approval, each
   * call of that batch gets an error result, so the transcript can go to a
   * model again. Does nothing when idle otherwise.
   */
  abort(): void {
    if (this.#active) return this.#active.abort();
    if (this.#paused) this.#abandonPausedBatch();
  }

  /**
   * The agent's state as plain JSON (transcript, queued steering and
   * follow-up messages, calls waiting for approval, a format version):
   * `new Agent({ model, executor, snapshot })` restores it, in this process
   * or another. Throws while a run is active.
   */
  snapshot(): AgentSnapshot {
    if (this.#active) throw new ToolpoolError('TOOLPOOL_ERR_AGENT_STATE', AgentErrors.snapshotWhileRunning());
    const state = {
      runId: this.#runId,
      messages: this.#transcript,
      steering: this.#steering.toArray(),
      followUps: this.#followUps.toArray(),
      ...(this.#paused ? { approval: this.#paused } : {}),
    };
    return takeSnapshot(state, this.#snapshotSecret);
  }

  /** One run; when it pauses for approval, remembers the batch with the decisions made so far. */
  async #run(
    start: RunStart,
    decided: Pick<PausedBatch, 'approved' | 'rejected'> = { approved: [], rejected: {} },
  ): Promise<Message[]> {
    const controller = new AbortController();
    this.#active = controller;
    try {
      const run = new AgentRun({
        model: this.#model,
        executor: this.#executor,
        systemPrompt: this.#systemPrompt,
        maxTurns: this.#maxTurns,
        runId: this.#runId,
        ...(this.#onElicit ? { onElicit: this.#onElicit } : {}),
        transcript: this.#transcript,
        signal: controller.signal,
        takeSteering: () => this.#steering.take(),
        hasSteering: () => this.#steering.size > 0,
        takeFollowUps: () => this.#followUps.take(),
        hasFollowUps: () => this.#followUps.size > 0,
        emit: (event) => this.#events.emit(event),
      });
      const { messages, end } = await run.run(start);
      if (end.pending) this.#paused = pausedBatch(end.pending, decided);
      return messages;
    } finally {
      this.#active = undefined;
    }
  }

  /** abort() while idle with calls waiting for approval: every call of that batch is answered, with its events. */
  #abandonPausedBatch(): void {
    this.#paused = undefined;
    const calls = toolCallsOf(this.#transcript.at(-1) as AssistantMessage);
    const { results, events } = refuseCalls(calls, AgentErrors.notRunAborted, 'ABORTED');
    // abort() is synchronous: the transcript is valid at once; listeners get the events in order, as usual.
    for (const event of events) void this.#events.emit(event);
    for (const result of results) {
      void this.#events.emit({ type: 'message_start', message: result });
      this.#transcript.push(result);
      void this.#events.emit({ type: 'message_end', message: result });
    }
  }
}

/** The executor's check of a snapshot's pending calls against its tools, where it has one (toolpool's does). */
function pendingCheckOf(executor: AgentExecutor): PendingCallCheck | undefined {
  const check = (executor as Partial<PendingCheckable>)[CHECK_PENDING];
  return typeof check === 'function' ? check.bind(executor) : undefined;
}

function checkOptions(options: AgentOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('(options)', 'must be an object { model, executor }'),
    );
  if (typeof options.model?.stream !== 'function')
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('model', 'must be a Model with a stream(request) method'),
    );
  if (typeof options.executor?.executeBatch !== 'function' || !Array.isArray(options.executor.definitions)) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('executor', 'must be an executor from createExecutor()'),
    );
  }
  if (
    options.maxTurns !== undefined &&
    !((Number.isInteger(options.maxTurns) || options.maxTurns === Infinity) && options.maxTurns >= 1)
  ) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('maxTurns', 'must be an integer >= 1 (or Infinity)'),
    );
  }
  if (options.onElicit !== undefined && typeof options.onElicit !== 'function')
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', AgentErrors.badOption('onElicit', 'must be a function'));
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== 'string') {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('systemPrompt', 'must be a string'),
    );
  }
  if (
    options.runId !== undefined &&
    !(typeof options.runId === 'string' && options.runId.length > 0 && options.runId.length <= 512)
  ) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('runId', 'must be a non-empty string of at most 512 characters'),
    );
  }
  if (options.messages !== undefined && !Array.isArray(options.messages))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('messages', 'must be an array of messages'),
    );
  const secret = options.snapshotSecret;
  if (secret !== undefined && !((typeof secret === 'string' || secret instanceof Uint8Array) && secret.length > 0)) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('snapshotSecret', 'must be a non-empty string or byte array'),
    );
  }
  if (options.messages !== undefined && options.snapshot !== undefined) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      AgentErrors.badOption('snapshot', 'cannot be given together with messages (the snapshot holds the transcript)'),
    );
  }
  for (const mode of ['steeringMode', 'followUpMode'] as const) {
    if (options[mode] !== undefined && options[mode] !== 'one-at-a-time' && options[mode] !== 'all') {
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        AgentErrors.badOption(mode, 'must be "one-at-a-time" or "all"'),
      );
    }
  }
}
