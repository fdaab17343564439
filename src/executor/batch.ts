import {
  checkApprovals,
  hasGatedCalls,
  type ApprovalCheck,
  type ApprovalOptions,
  type PendingApproval,
} from './approval.ts';
import { MAX_ARGUMENT_DEPTH, isPlainObject, parseArguments, type Parsed } from '../tools/arguments.ts';
import { ConfigErrors, LedgerErrors, ToolErrors, errorMessage, preview } from '../core/errors.ts';
import type { Listener, OrderedEmitter, ToolEndEvent, ToolEvent } from '../core/events.ts';
import type { AfterToolCallHook, AfterToolCallResult, BeforeToolCallHook, HookQueue } from '../core/hooks.ts';
import type { RegisteredTool } from './registry.ts';
import type { RunOutcome, RunUsage } from '../core/runner.ts';
import { argsDigest, endRecord, thisHost, type Ledger, type LedgerKey } from '../core/ledger.ts';
import { textResult } from '../core/tool-result.ts';
import { batchLimitsProblem, tightenLimits } from '../core/limits.ts';
import type { ExecutionMode, ToolCall, ToolLimits, ToolResult, ToolResultMessage } from '../core/tool.ts';
import { ToolpoolTypeError, type ToolErrorCode } from '../core/error-codes.ts';
import type { ElicitHandler } from '../core/elicitation.ts';
import { CallEnd, callElicit } from './elicit.ts';

/**
 * A run id for the tools' `ctx.runId` only, not a ledger key: what a worker
 * machine of toolpool/bullmq passes on for its host's call (the host keyed
 * the call in its own ledger already). Not part of the public options.
 */
export const CONTEXT_RUN_ID: unique symbol = Symbol('toolpool.contextRunId');

export interface BatchOptions {
  /** @internal */
  [CONTEXT_RUN_ID]?: string;
  /** Aborts running tools (their `ctx.signal`, then a kill after the grace period) and skips calls not yet started. */
  signal?: AbortSignal;
  /** Also receives this batch's events, in the same ordered chain as subscribers (used by `Agent`). */
  onEvent?: Listener<ToolEvent>;
  /**
   * Decisions for calls whose tool has `needsApproval`. Without them such a
   * call gets an error result; with `undecided: 'pause'` a batch with an
   * undecided call runs nothing and returns it in `pending`.
   */
  approvals?: ApprovalOptions;
  /**
   * Limits for this batch's calls that can only tighten each tool's own
   * (a field higher than the tool's is ignored). `serveQueue` runs each
   * call from the queue with the limits its host sent.
   */
  limits?: ToolLimits;
  /**
   * The calls' arguments already went through their tool's
   * `prepareArguments` (on the host that sent them): they are validated
   * again, not prepared again.
   */
  prepared?: boolean;
  /**
   * The run these calls belong to: with a ledger (`createExecutor({ ledger })`),
   * each call is recorded under `(runId, call id)` and runs at most once
   * (a call whose key ended gets its recorded result; one that started and
   * never ended is not run again). Without it the batch is not recorded.
   */
  runId?: string;
  /**
   * Answers the tools' `ctx.elicit` questions in this batch, in place of
   * `createExecutor({ onElicit })` (an Agent's, an MCP server's client).
   */
  onElicit?: ElicitHandler;
}

export interface BatchResult {
  /** One result per call, in the order the model asked for them. */
  results: ToolResultMessage[];
  /** Every result asked to terminate. */
  terminate: boolean;
  /** A hook stopped the run. */
  stopped: boolean;
  stopReason?: string;
  /**
   * Set only with `approvals.undecided: 'pause'` when some call needs a
   * person: then no call ran, no event was sent and `results` is empty.
   */
  pending?: PendingApproval[];
}

/** What a batch needs from its executor. */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export interface BatchEnvironment {
  tools: ReadonlyMap<string, RegisteredTool>;
  toolExecution: ExecutionMode;
  events: OrderedEmitter<ToolEvent>;
  hooks: HookQueue;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  /** Where keyed calls are recorded (batches with a runId). */
  ledger?: Ledger;
  /** Answers the tools' `ctx.elicit` (createExecutor({ onElicit })). */
  onElicit?: ElicitHandler;
}

/** One call's progress through the batch. */
interface CallState {
  readonly call: ToolCall;
  readonly startedAt: number;
  tool?: RegisteredTool;
  /** Validated arguments; set only when the call may run. */
  args?: Record<string, unknown>;
  executed: boolean;
  result?: ToolResult;
  isError: boolean;
  /** Why it failed, set with isError. */
  errorCode?: ToolErrorCode;
  durationMs: number;
  /** What the runner measured; absent when the call never ran. */
  usage?: RunUsage;
  /** Its result came from the ledger: the call ran before, under the same key. */
  replayed?: boolean;
}

/**
 * Runs one batch of tool calls with the seed's lifecycle:
 * prepare (tool_start, lookup, parse, prepareArguments, validation,
 * beforeToolCall) in source order; execute (only this part concurrent);
 * finalize (afterToolCall, tool_end, result message) in source order.
 */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export class BatchRun {
  #stopped = false;
  #stopReason: string | undefined;
  /** Error texts for calls the approval gate refused, by call id. */
  #refusals: ApprovalCheck['refusals'] | undefined;
  #refusalCodes: ApprovalCheck['refusalCodes'] | undefined;
  /** Arguments the approval gate prepared and validated for calls that may run: they run with these, not with a second prepareArguments. */
  #settled: ApprovalCheck['settled'] | undefined;
  /** Calls whose id an earlier call of this batch already has: results are keyed by id, so these do not run. */
  readonly #duplicates: ReadonlySet<ToolCall>;

  constructor(
    private readonly env: BatchEnvironment,
    private readonly calls: ToolCall[],
    private readonly options: BatchOptions,
  ) {
    this.#duplicates = duplicateCalls(calls);
  }

  async run(): Promise<BatchResult> {
    if (hasGatedCalls(this.env.tools, this.calls)) {
      // A call with a reused id is refused anyway; it is not put before a person.
      const unique = this.#duplicates.size > 0 ? this.calls.filter((call) => !this.#duplicates.has(call)) : this.calls;
      const approvals = await checkApprovals(this.env.tools, unique, this.options.approvals);
      if (approvals.pending.length > 0)
        return { results: [], terminate: false, stopped: false, pending: approvals.pending };
      this.#refusals = approvals.refusals;
      this.#refusalCodes = approvals.refusalCodes;
      this.#settled = approvals.settled;
    }
    // A batch of one is the same run either way; the sequential path is the shorter one.
    const results =
      this.calls.length === 1 || this.#isSequential() ? await this.#runSequentially() : await this.#runConcurrently();
    const terminate =
      results.length > 0 && results.every(({ state }) => !state.isError && state.result?.terminate === true);
    return {
      results: results.map(({ message }) => message),
      terminate,
      stopped: this.#stopped,
      ...(this.#stopReason !== undefined ? { stopReason: this.#stopReason } : {}),
    };
  }

  /** Sequential for the whole executor, or whenever a sequential tool is in the batch. */
  #isSequential(): boolean {
    if (this.env.toolExecution === 'sequential') return true;
    return this.calls.some((call) => this.env.tools.get(call.name)?.info.executionMode === 'sequential');
  }

  async #runConcurrently() {
    if (this.#unobserved()) return this.#runUnobserved();
    const states: CallState[] = [];
    for (const call of this.calls) states.push(await this.#prepare(call));
    await Promise.all(states.map((state) => this.#execute(state)));
    const results = [];
    for (const state of states) results.push(await this.#finalize(state));
    return results;
  }

  /**
   * With no listener and no hook, nobody can see whether a call started
   * before the next one was prepared: each call goes to its runner as soon
   * as it is admitted (workers start while later calls are validated), and
   * the results are made without a trip through the event chain.
   */
  async #runUnobserved() {
    const states: CallState[] = [];
    const running: Promise<void>[] = [];
    for (const call of this.calls) {
      const state = await this.#prepare(call);
      states.push(state);
      running.push(this.#execute(state));
    }
    await Promise.all(running);
    return states.map((state) => ({ state, message: resultMessage(state) }));
  }

  #unobserved(): boolean {
    const { events, beforeToolCall, afterToolCall } = this.env;
    return !events.hasListeners && !this.options.onEvent && !beforeToolCall && !afterToolCall;
  }

  async #runSequentially() {
    const results = [];
    for (const call of this.calls) {
      const state = await this.#prepare(call);
      await this.#execute(state);
      results.push(await this.#finalize(state));
    }
    return results;
  }

  async #prepare(call: ToolCall): Promise<CallState> {
    const state: CallState = { call, startedAt: performance.now(), executed: false, isError: false, durationMs: 0 };
    const parsed = parseArguments(call.arguments);
    await this.#emit({
      type: 'tool_start',
      toolCallId: call.id,
      toolName: call.name,
      args: parsed.ok ? parsed.value : call.arguments,
    });
    let problem: string | undefined;
    try {
      const admitted = this.#admit(state, parsed);
      problem = admitted instanceof Promise ? await admitted : admitted;
    } catch (error) {
      // Whatever is inside a call (a Proxy, a getter, a depth no validator survives) ends that call, never the batch.
      state.args = undefined;
      state.errorCode = 'INVALID_ARGUMENTS';
      problem = ToolErrors.invalidArguments(call.name, errorMessage(error));
    }
    if (problem !== undefined) this.#settle(state, textResult(problem), true);
    return state;
  }

  /**
   * Everything that can keep a call from running, in order; returns the
   * error text, or nothing when it may run. Synchronous unless the tool has
   * `prepareArguments` or there is a `beforeToolCall` hook: most calls pay
   * for no promise here.
   */
  #admit(state: CallState, parsed: Parsed): string | undefined | Promise<string | undefined> {
    const { call } = state;
    if (this.#stopped) return failed(state, 'STOPPED', ToolErrors.stoppedBeforeRun(this.#stopReason));
    if (this.options.signal?.aborted) return failed(state, 'ABORTED', ToolErrors.abortedBeforeStart());
    if (this.#duplicates.has(call)) return failed(state, 'DUPLICATE_CALL_ID', ToolErrors.duplicateCallId(call.id));
    const tool = this.env.tools.get(call.name);
    if (!tool) return failed(state, 'NOT_FOUND', ToolErrors.unknownTool(call.name, [...this.env.tools.keys()]));
    if (!parsed.ok && parsed.tooDeep)
      return failed(state, 'INVALID_ARGUMENTS', ToolErrors.argumentsTooDeep(call.name, MAX_ARGUMENT_DEPTH));
    if (!parsed.ok)
      return failed(
        state,
        'INVALID_ARGUMENTS',
        ToolErrors.malformedJson(
          call.name,
          parsed.reason,
          typeof call.arguments === 'string' ? call.arguments : preview(call.arguments),
        ),
      );
    if (!isPlainObject(parsed.value))
      return failed(state, 'INVALID_ARGUMENTS', ToolErrors.argumentsNotObject(call.name, parsed.value));
    const settled = this.#settled?.get(call.id);
    if (settled) return this.#allow(state, tool, settled);
    if (tool.info.hasPrepare && this.options.prepared !== true)
      return this.#prepareThenValidate(state, tool, parsed.value);
    return this.#validate(state, tool, parsed.value);
  }

  async #prepareThenValidate(
    state: CallState,
    tool: RegisteredTool,
    raw: Record<string, unknown>,
  ): Promise<string | undefined> {
    let args: unknown;
    try {
      args = await tool.runner.prepare(raw, this.options.signal);
    } catch (error) {
      return failed(state, 'PREPARE_FAILED', ToolErrors.prepareFailed(state.call.name, errorMessage(error)));
    }
    if (!isPlainObject(args))
      return failed(
        state,
        'PREPARE_FAILED',
        ToolErrors.prepareFailed(state.call.name, `it returned ${JSON.stringify(args)}, not an object`),
      );
    return this.#validate(state, tool, args);
  }

  #validate(
    state: CallState,
    tool: RegisteredTool,
    args: Record<string, unknown>,
  ): string | undefined | Promise<string | undefined> {
    const validation = tool.validate(args, state.call.arguments);
    if (!validation.ok) return failed(state, 'INVALID_ARGUMENTS', validation.message);
    return this.#allow(state, tool, validation.args);
  }

  /** Validated arguments: what the approval gate refused stays refused, then beforeToolCall decides. */
  #allow(
    state: CallState,
    tool: RegisteredTool,
    args: Record<string, unknown>,
  ): string | undefined | Promise<string | undefined> {
    const refusal = this.#refusals?.get(state.call.id);
    if (refusal !== undefined) return failed(state, this.#refusalCodes?.get(state.call.id) ?? 'NOT_APPROVED', refusal);
    state.tool = tool;
    const hook = this.env.beforeToolCall;
    if (hook) return this.#askBeforeHook(state, args, hook);
    state.args = args;
    return undefined;
  }

  async #askBeforeHook(
    state: CallState,
    args: Record<string, unknown>,
    hook: BeforeToolCallHook,
  ): Promise<string | undefined> {
    let decision;
    try {
      decision = await this.env.hooks.run(() => hook({ toolCall: state.call, args }));
    } catch (error) {
      return failed(state, 'HOOK_FAILED', ToolErrors.beforeHookThrew(errorMessage(error)));
    }
    if (decision && 'stop' in decision && decision.stop) {
      this.#stop(decision.reason);
      return failed(state, 'STOPPED', ToolErrors.stoppedBeforeRun(decision.reason));
    }
    if (decision && 'block' in decision && decision.block)
      return failed(state, 'BLOCKED', ToolErrors.blocked(decision.reason));
    state.args = args;
    return undefined;
  }

  async #execute(state: CallState): Promise<void> {
    const { tool, args, call } = state;
    if (!tool || !args) return;
    // A stop asked for by a hook (in any call) means no further tool starts.
    if (this.#stopped)
      return this.#settle(state, textResult(ToolErrors.stoppedBeforeRun(this.#stopReason)), true, 'STOPPED');
    const ledger = this.env.ledger;
    const key: LedgerKey | undefined =
      ledger && this.options.runId !== undefined ? { runId: this.options.runId, callId: call.id } : undefined;
    if (ledger && key) {
      if (!(await this.#claim(state, tool, args, ledger, key))) return;
      // Stopped or aborted while the claim was written: the call never reaches its tool, so its claim goes.
      if (this.#stopped || this.options.signal?.aborted) return this.#unclaim(state, ledger, key);
    }
    state.executed = true;
    let outcome: RunOutcome;
    try {
      outcome = await this.#run(tool, args, call);
    } catch (error) {
      outcome = { ok: false as const, error: ToolErrors.workerCrashed(errorMessage(error)), code: 'CRASHED' as const };
    }
    state.usage = outcome.usage;
    // A tool with an outputSchema promised details of that shape: a result that breaks it is the tool's error.
    const mismatch = outcome.ok ? tool.checkDetails?.(outcome.result) : undefined;
    if (mismatch !== undefined) this.#settle(state, textResult(mismatch), true, 'INVALID_RESULT');
    else if (outcome.ok) this.#settle(state, outcome.result, false);
    else this.#settle(state, textResult(outcome.error), true, outcome.code ?? 'FAILED');
    // Where the runner cannot tell whether the call ran (a remote call lost with its machine), the record stays "started".
    if (ledger && key && !outcome.unsure) await this.#recordEnd(state, ledger, key);
  }

  /**
   * Records that a keyed call starts, right before it runs; true when it may
   * run. A key already recorded settles the call: the recorded result (it
   * ended), or an error that it may have run (it started and never ended),
   * unless its tool says a second run is harmless. A ledger that fails runs nothing.
   */
  async #claim(
    state: CallState,
    tool: RegisteredTool,
    args: Record<string, unknown>,
    ledger: Ledger,
    key: LedgerKey,
  ): Promise<boolean> {
    const { call } = state;
    const digest = argsDigest(args);
    let record;
    try {
      record = await ledger.claim(key, {
        toolName: call.name,
        argsDigest: digest,
        startedAt: Date.now(),
        startedBy: thisHost(),
      });
    } catch (error) {
      this.#settle(state, textResult(LedgerErrors.unreachable(ledger.name, errorMessage(error))), true);
      return false;
    }
    if (record === undefined) return true;
    if (record.toolName !== call.name || record.argsDigest !== digest) {
      this.#settle(
        state,
        textResult(
          LedgerErrors.anotherCall(
            call.name,
            key.runId,
            key.callId,
            record.toolName,
            record.startedAt,
            record.startedBy,
          ),
        ),
        true,
      );
      return false;
    }
    const { end } = record;
    if (end?.result) {
      state.replayed = true;
      this.#settle(state, end.result, end.isError);
      return false;
    }
    if (end) {
      this.#settle(
        state,
        textResult(
          LedgerErrors.resultNotKept(
            call.name,
            end.endedAt,
            record.startedBy,
            end.omitted?.bytes ?? 0,
            end.omitted?.sha256 ?? '',
          ),
        ),
        true,
      );
      return false;
    }
    if (tool.info.annotations?.idempotentHint === true) return true;
    this.#settle(
      state,
      textResult(LedgerErrors.mayHaveRun(call.name, key.runId, key.callId, record.startedAt, record.startedBy)),
      true,
    );
    return false;
  }

  async #unclaim(state: CallState, ledger: Ledger, key: LedgerKey): Promise<void> {
    this.#settle(
      state,
      textResult(this.#stopped ? ToolErrors.stoppedBeforeRun(this.#stopReason) : ToolErrors.abortedBeforeStart()),
      true,
    );
    try {
      await ledger.release(key);
    } catch {
      // The claim stays: a retry is told the call may have run, which is safe.
    }
  }

  /** The call's end, as the tool gave it (before afterToolCall), bounded; a ledger that fails leaves the call "started" and says so. */
  async #recordEnd(state: CallState, ledger: Ledger, key: LedgerKey): Promise<void> {
    try {
      await ledger.end(key, endRecord(state.result!, state.isError));
    } catch (error) {
      process.emitWarning(
        LedgerErrors.endNotRecorded(ledger.name, key.runId, key.callId, errorMessage(error)),
        'ToolpoolWarning',
      );
    }
  }

  #run(tool: RegisteredTool, args: Record<string, unknown>, call: ToolCall) {
    const handler = this.options.onElicit ?? this.env.onElicit;
    // Most batches have no one to answer a question: their calls pay for no call-end signal.
    const end = handler ? new CallEnd() : undefined;
    const running = tool.runner.execute({
      callId: call.id,
      runId: this.options.runId ?? this.options[CONTEXT_RUN_ID],
      args,
      limits: this.options.limits ? tightenLimits(tool.limits, this.options.limits) : tool.limits,
      signal: this.options.signal,
      onUpdate: (partial) => this.#emit({ type: 'tool_update', toolCallId: call.id, toolName: call.name, partial }),
      // Without a listener no tool_end is seen: the worker need not measure CPU and heap.
      measureUsage: this.env.events.hasListeners || this.options.onEvent !== undefined,
      elicit: callElicit(handler, call.name, call.id, end),
    });
    return end ? running.finally(() => end.end()) : running;
  }

  #settle(state: CallState, result: ToolResult, isError: boolean, code?: ToolErrorCode): void {
    state.result = result;
    state.isError = isError;
    state.errorCode = isError ? (code ?? state.errorCode ?? 'FAILED') : undefined;
    state.durationMs = performance.now() - state.startedAt;
  }

  async #finalize(state: CallState): Promise<{ state: CallState; message: ToolResultMessage }> {
    // A replayed result goes through afterToolCall as it did when the call ran.
    if ((state.executed || state.replayed) && this.env.afterToolCall)
      await this.#askAfterHook(state, this.env.afterToolCall);
    await this.#emit(endEvent(state));
    return { state, message: resultMessage(state) };
  }

  async #askAfterHook(state: CallState, hook: AfterToolCallHook): Promise<void> {
    let change: AfterToolCallResult | void;
    try {
      change = await this.env.hooks.run(() =>
        hook({ toolCall: state.call, args: state.args!, result: state.result!, isError: state.isError }),
      );
    } catch (error) {
      state.result = textResult(ToolErrors.afterHookThrew(errorMessage(error)));
      state.isError = true;
      state.errorCode = 'HOOK_FAILED';
      return;
    }
    if (!change) return;
    const result = { ...state.result! };
    if (change.content !== undefined) result.content = change.content;
    if ('details' in change) result.details = change.details;
    if (change.terminate !== undefined) result.terminate = change.terminate;
    if (change.isError !== undefined) state.isError = change.isError;
    // A hook that turns a success into an error gives no reason a code could name.
    state.errorCode = state.isError ? (state.errorCode ?? 'FAILED') : undefined;
    state.result = result;
    if (change.stop) this.#stop(change.reason);
  }

  #stop(reason: string | undefined): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#stopReason = reason;
  }

  #emit(event: ToolEvent): Promise<void> {
    return this.env.events.emit(event, this.options.onEvent);
  }
}

const NO_DUPLICATES: ReadonlySet<ToolCall> = new Set();

/** Every call after the first with the same id. */
function duplicateCalls(calls: ToolCall[]): ReadonlySet<ToolCall> {
  if (calls.length < 2) return NO_DUPLICATES;
  const seen = new Set<string>();
  const duplicates = new Set<ToolCall>();
  for (const call of calls) {
    if (seen.has(call.id)) duplicates.add(call);
    else seen.add(call.id);
  }
  return duplicates;
}

/** The call's tool_end: the usage figures are 0 (times) or absent (cpu, heap) for a call that never ran. */
function endEvent({ call, result, isError, errorCode, durationMs, usage, replayed }: CallState): ToolEndEvent {
  const event: ToolEndEvent = {
    type: 'tool_end',
    toolCallId: call.id,
    toolName: call.name,
    result: result!,
    isError,
    durationMs,
    queuedMs: usage?.queuedMs ?? 0,
    runningMs: usage?.runningMs ?? 0,
  };
  if (isError) event.errorCode = errorCode ?? 'FAILED';
  if (usage?.cpuMs !== undefined) event.cpuMs = usage.cpuMs;
  if (usage?.heapUsedBytes !== undefined) event.heapUsedBytes = usage.heapUsedBytes;
  if (replayed) event.replayed = true;
  return event;
}

function resultMessage({ call, result, isError, errorCode }: CallState): ToolResultMessage {
  const message: ToolResultMessage = {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: result!.content,
    details: result!.details,
    isError,
    timestamp: Date.now(),
  };
  if (isError) message.errorCode = errorCode ?? 'FAILED';
  return message;
}

/** Records why a call cannot run; returns its error text. */
function failed(state: CallState, code: ToolErrorCode, text: string): string {
  state.errorCode = code;
  return text;
}

/** Checks the shape of `executeBatch`'s first argument; a programming error, so it throws. */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export function checkToolCalls(calls: unknown): ToolCall[] {
  if (!Array.isArray(calls))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.badToolCalls(`toolCalls must be an array of { id, name, arguments }, got ${typeof calls}`),
    );
  calls.forEach((call, index) => {
    const { id, name } = (call ?? {}) as Partial<ToolCall>;
    if (typeof id !== 'string' || typeof name !== 'string') {
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        ConfigErrors.badToolCalls(`toolCalls[${index}] needs a string "id" and a string "name"`),
      );
    }
  });
  return calls as ToolCall[];
}

/** Checks the batch options a typo would silently turn into something else; a programming error, so it throws. */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export function checkBatchOptions(options: BatchOptions): void {
  if (
    options.runId !== undefined &&
    !(typeof options.runId === 'string' && options.runId.length > 0 && options.runId.length <= 512)
  ) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      LedgerErrors.badRunId('must be a non-empty string of at most 512 characters'),
    );
  }
  if (options.onElicit !== undefined && typeof options.onElicit !== 'function')
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.badBatchOption('onElicit', 'must be a function'),
    );
  if (options.limits === undefined) return;
  const problem = batchLimitsProblem(options.limits);
  if (problem)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', ConfigErrors.badBatchOption('limits', problem));
}
