import { ToolErrors, boundText, errorMessage, stopMessage } from '../../core/errors.ts';
import { reportedCode, stopCode, type ToolErrorCode } from '../../core/error-codes.ts';
import type { ResolvedLimits } from '../../core/limits.ts';
import type { RunJob, RunOutcome, RunUsage } from '../../core/runner.ts';
import { StopTimer, type StopReason, type Stoppable } from '../../core/stop-timer.ts';
import type { ToolResult } from '../../core/tool.ts';
import { noOneToAsk, type ElicitResult } from '../../core/elicitation.ts';
import { checkPayload } from './payload.ts';
import type { ExecuteTask, HostMessage, ModuleTask, ResultMessage, WorkerUsage } from './protocol.ts';
import { HOST_READS_HEAP, cpuAtBegin, hostFigures } from './usage-reading.ts';
import type { Worker } from 'node:worker_threads';

/**
 * What a call sees of the worker channel it was sent on: a narrow view (as
 * piscina's balancer sees a worker), so that the channel, which holds its
 * calls, and the call do not import each other.
 */
export interface CallChannel {
  readonly worker: Worker;
  /** Terminated, and not ended within the bound to see how it ends: a thread inside a native call, still running. */
  readonly stillRuns: boolean;
  hasStarted(call: PoolCall): boolean;
  post(message: HostMessage): void;
  /** Terminates the call's thread; false when the call is no longer on this channel. */
  kill(call: PoolCall): boolean;
  retireIfRunning(call: PoolCall, reason: string): void;
}

/**
 * How many updates of one call may be unconsumed on the host before its
 * worker is breaking flow control (the worker's own window, plus the last
 * update it posts when the call settles).
 */
export const UPDATE_WINDOW = 64;
/**
 * How long after its terminate an abandoned thread's calls wait for its end
 * before they are told it could not be stopped and still runs. A thread
 * busy in a long garbage collection near its heap limit cannot be
 * terminated either, and on a loaded machine it ends, of running out of
 * memory, seconds later: the calls are told how it really ended when it
 * ends within this bound. Only a thread still there after it is one inside
 * a native call.
 */
export const VERDICT_AFTER_MS = 6_000;
/** After a hard kill of a call no longer on its worker's channel, how long before the call is ended anyway. */
const KILL_SETTLE_MS = 1_000;
/** After a hard kill, the channel tells the call how its thread ended within VERDICT_AFTER_MS: past this, it is ended anyway. */
const KILL_FALLBACK_MS = VERDICT_AFTER_MS + 1_000;

/** What a call may ask of its pool. */
export interface CallControls {
  readonly loadTimeoutMs: number;
  acknowledgeLater(call: PoolCall): void;
}

/**
 * One call of a pool, as the host sees it. Everything that decides its fate
 * is host-side state: which worker it was sent to (the host picks), when it
 * began (the host's clock: when it was sent with room, or when the call
 * ahead of it ended), whether the worker has started it (its start
 * counter), how many updates it has consumed, and how it was stopped.
 */
export class PoolCall implements Stoppable {
  /** The worker it was sent to; undefined while it waits for one. */
  channel: CallChannel | undefined;
  /** Times it was sent to a worker (a call no worker started goes back to the queue). */
  attempts = 0;
  /** Its place among the calls sent to its worker (0 while it waits for one). */
  seq = 0;
  /** Asked back from the worker it was sent to, for an idle one. */
  recalled = false;
  received = 0;
  consumed = 0;
  acked = 0;
  /** When the result arrived (0 before). */
  resultAt = 0;
  outcome: RunOutcome | undefined;
  readonly queuedAt = Date.now();
  readonly done: Promise<RunOutcome>;
  readonly limits: ResolvedLimits;
  readonly toolKey: string;
  readonly concurrency: number;
  #resolve!: (outcome: RunOutcome) => void;
  #startedAt = 0;
  #loading = false;
  /** Found not started by its worker at its deadline: its clock restarts when the worker is seen to start it. */
  #unconfirmed = false;
  /** For the call's usage, on the monotonic clock: handed to this pool; began in its worker (not reset by loaded()). */
  readonly #handedAt = performance.now();
  #runningSince = 0;
  /** The worker thread's CPU clock when the call began (Node 22+, when someone reads the call's usage). */
  #cpuAtBegin: Promise<NodeJS.CpuUsage> | undefined;
  readonly #stopTimer: StopTimer;
  /** Made when the tool first asks the person something: aborted when the call is stopped or ends. */
  #questions: AbortController | undefined;

  constructor(
    readonly runId: number,
    private readonly job: RunJob,
    private readonly ref: ModuleTask,
    private readonly controls: CallControls,
  ) {
    this.done = new Promise((resolve) => (this.#resolve = resolve));
    this.limits = job.limits;
    this.toolKey = toolKeyOf(ref);
    this.concurrency = ref.concurrency ?? 1;
    this.#stopTimer = new StopTimer(this, job.signal);
  }

  get started(): boolean {
    return this.#startedAt !== 0;
  }

  /**
   * Written out field by field: on Node 20, V8 takes a slow path for
   * properties added after a spread (`{ ...ref, callId }` cost ~7 µs here,
   * a tenth of a whole call).
   */
  task(hostFunctions: string[]): ExecuteTask {
    const { ref, job } = this;
    return {
      module: ref.module,
      source: ref.source,
      options: ref.options,
      // Every load is checked against what the host compiled, whichever task a worker gets first (not only describe and preload).
      codeHash: ref.codeHash,
      concurrency: this.concurrency,
      seq: this.seq,
      callId: job.callId,
      batchRunId: job.runId,
      args: job.args,
      runId: this.runId,
      maxResultBytes: job.limits.maxResultBytes,
      hostFunctions,
      // The worker reports its heap only where the host cannot read it (Node 20); CPU it never reports.
      measureUsage: job.measureUsage !== false && !HOST_READS_HEAP,
    };
  }

  /** Sent to a worker; it begins when that worker has room for it. */
  sent(channel: CallChannel, seq: number): void {
    this.channel = channel;
    this.seq = seq;
    this.attempts++;
  }

  /** Its worker went away without starting it: it waits for another. */
  unsent(): void {
    this.channel = undefined;
    this.seq = 0;
    this.#startedAt = 0;
    this.#loading = false;
    this.#unconfirmed = false;
    this.#runningSince = 0;
  }

  // Stoppable: the shared two-step stop.

  /** The timeout counts from the start; a first import of the module gets loadTimeoutMs on top. */
  startedAt(): number {
    if (this.#startedAt === 0) return 0;
    return this.#loading ? this.#startedAt + this.controls.loadTimeoutMs : this.#startedAt;
  }

  /**
   * A call its worker has not started by its deadline (the worker is
   * blocked after its last call) does not time out: the watch retires that
   * worker and the call goes to another.
   */
  confirmedStarted(): boolean {
    const started = this.channel?.hasStarted(this) ?? false;
    if (!started) this.#unconfirmed = true;
    else if (this.#unconfirmed) {
      // Its worker started it only after its deadline (still busy with an earlier call's aftermath): that wait was not this
      // call's time, so its timeout counts from now, when the host first sees it started (at most one recheck late).
      this.#unconfirmed = false;
      this.#startedAt = Date.now();
      this.#runningSince = performance.now();
    }
    return started;
  }

  /** When it began as the host counts it (0 before), for the watch. */
  get beganAt(): number {
    return this.#startedAt;
  }

  /**
   * Ends a call that has not started: one still waiting is dropped; one
   * sent ahead to a worker is dropped there (the worker answers that it did
   * not start it, or, if it just had, stops it).
   */
  cancelIfQueued(): boolean {
    if (this.started) return false;
    this.#settle({ ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' });
    // Still waiting for a worker: the queue skips it (it has an outcome now).
    this.channel?.post({ t: 'abort', runId: this.runId, reason: 'aborted' });
    return true;
  }

  requestStop(reason: StopReason): void {
    this.channel?.post({ t: 'abort', runId: this.runId, reason });
    this.#questions?.abort();
  }

  /** The tool's question (ctx.elicit), asked on the host; a stop or the call's end ends it. */
  elicit(request: unknown): Promise<ElicitResult> {
    if (!this.job.elicit) return noOneToAsk();
    this.#questions ??= new AbortController();
    if (this.outcome || this.#stopTimer.stopped) this.#questions.abort();
    return this.job.elicit(request, this.#questions.signal);
  }

  kill(): void {
    const killing = this.channel?.kill(this) ?? false;
    setTimeout(settleKilled, killing ? KILL_FALLBACK_MS : KILL_SETTLE_MS, this).unref();
  }

  // What the worker's channel reports.

  /** Its worker has room for it now: it runs from here (or imports its module first, when `loading`). */
  begin(loading: boolean): void {
    this.#startedAt = Date.now();
    this.#runningSince = performance.now();
    this.#loading = loading;
    if (this.job.measureUsage !== false && this.channel) this.#cpuAtBegin = cpuAtBegin(this.channel.worker);
    // Ended while it waited in its worker (aborted): the worker drops it, or stops it if it had just started it.
    if (this.outcome) {
      const channel = this.channel!;
      setTimeout(
        () => channel.retireIfRunning(this, 'a cancelled call kept running'),
        this.limits.abortGraceMs,
      ).unref();
      return;
    }
    this.#stopTimer.recheck();
  }

  /** The module finished importing: the tool runs from now, and its timeout counts from now. */
  loaded(): void {
    if (!this.#loading) return;
    this.#loading = false;
    this.#startedAt = Date.now();
    this.#stopTimer.recheck();
  }

  /** Returns a protocol problem, or undefined. */
  receiveUpdate(partial: ToolResult): string | undefined {
    this.received++;
    if (this.received - this.consumed > UPDATE_WINDOW + 1)
      return 'it ignored flow control (too many unconsumed updates)';
    const problem = checkPayload(partial, 'update', this.limits.maxResultBytes);
    if (problem) return `an update the runtime would not send (${problem})`;
    if (this.outcome || this.#stopTimer.stopped) return void this.#consumed();
    let delivered: void | Promise<void>;
    try {
      delivered = this.job.onUpdate(partial);
    } catch {
      delivered = undefined; // a listener's error is the listener's business
    }
    if (delivered instanceof Promise) void delivered.finally(() => this.#consumed());
    else this.#consumed();
    return undefined;
  }

  #consumed(): void {
    this.consumed++;
    this.controls.acknowledgeLater(this);
  }

  /** Returns a protocol problem, or undefined. */
  finish(message: ResultMessage): string | undefined {
    this.resultAt = Date.now();
    if (message.ok) {
      const problem = checkPayload(message.result, 'result', this.limits.maxResultBytes);
      if (problem) return `a result the runtime would not send (${problem})`;
    }
    const stop = this.#stopOutcome();
    if (stop) return void this.#settle(stop, message.usage);
    this.#settle(
      message.ok
        ? { ok: true, result: message.result! }
        : { ok: false, error: boundText(message.error!), code: reportedCode(message.code) },
      message.usage,
    );
    return undefined;
  }

  /** Its stop (an abort) was asked for: if its worker never started it, it never ran. */
  get stopping(): boolean {
    return this.#stopTimer.stopped !== undefined;
  }

  endUnstarted(): void {
    this.#settle({ ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' });
  }

  /** Ended by the host for a reason of its own (protocol violation, retirement, close). */
  fail(error: string, code: ToolErrorCode = 'CRASHED'): void {
    this.#settle(this.#stopOutcome() ?? { ok: false, error, code });
  }

  /**
   * Its worker thread ended while the call ran. Memory first: a worker out
   * of memory may die during a stop's grace period. `sharedWith` counts the
   * other calls that were running in the same worker.
   */
  workerDied(error: unknown, exitCode: number, sharedWith: number): void {
    if (isOutOfMemory(error)) {
      const { maxMemoryMb } = this.limits;
      return this.#settle({
        ok: false,
        error:
          sharedWith > 0
            ? ToolErrors.sharedWorkerOutOfMemory(maxMemoryMb, sharedWith)
            : ToolErrors.memoryLimit(maxMemoryMb),
        code: 'MEMORY_LIMIT',
      });
    }
    const stop = this.#stopOutcome();
    if (stop) return this.#settle(stop);
    this.#settle({
      ok: false,
      error: error === undefined ? ToolErrors.workerExited(exitCode) : ToolErrors.workerCrashed(errorMessage(error)),
      code: 'CRASHED',
    });
  }

  /** The reason this call's stop killed its worker, for the calls that shared it. */
  get killedBecause(): string {
    const stop = this.#stopTimer.stopped;
    if (stop?.reason === 'timeout') return `timed out after ${this.limits.timeoutMs} ms`;
    return 'was aborted and ignored its signal';
  }

  settleAfterKill(): void {
    this.#settle(this.#stopOutcome()!);
  }

  #stopOutcome(): RunOutcome | undefined {
    const stop = this.#stopTimer.stopped;
    if (!stop) return undefined;
    // A kill that could not end the thread is not reported as one.
    const how = stop.how === 'killed' && this.channel?.stillRuns ? 'unstoppable' : stop.how;
    return { ok: false, error: stopMessage(stop.reason, how, this.limits.timeoutMs), code: stopCode(stop.reason) };
  }

  /** Its worker's thread was terminated (for this call or another): the verdict on this call may take VERDICT_AFTER_MS. */
  terminated(): void {
    if (this.outcome) return;
    try {
      this.job.onTerminated?.();
    } catch {
      // the child's report to its host; nothing to do here if it fails
    }
  }

  /** Its worker was killed for this call's stop and did not end: it is inside a native call. */
  unstoppable(): void {
    const stop = this.#stopTimer.stopped;
    if (this.outcome || !stop || stop.how !== 'killed') return;
    try {
      this.job.onUnstoppable?.(stopMessage(stop.reason, 'killed', this.limits.timeoutMs));
    } catch {
      // the child's report to its host; nothing to do here if it fails
    }
  }

  /**
   * `outcome` is always a fresh object: a call that started gets its usage
   * on it. The call has its outcome at once; when someone reads its usage,
   * `done` resolves once the host has read the worker's CPU and heap.
   */
  #settle(outcome: RunOutcome, reported?: WorkerUsage): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.#questions?.abort();
    this.#stopTimer.dispose();
    if (this.#runningSince === 0) return this.#resolve(outcome);
    const usage: RunUsage = {
      queuedMs: this.#runningSince - this.#handedAt,
      runningMs: performance.now() - this.#runningSince,
    };
    outcome.usage = usage;
    const worker = this.channel?.worker;
    if (this.job.measureUsage === false || !worker) return this.#resolve(outcome);
    void hostFigures(worker, this.#cpuAtBegin, usage.runningMs, this.limits.maxMemoryMb, reported).then(
      (figures) => this.#resolve({ ...outcome, usage: { ...usage, ...figures } }),
      () => this.#resolve(outcome),
    );
  }
}

function settleKilled(call: PoolCall): void {
  call.settleAfterKill();
}

export function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

const toolKeys = new WeakMap<ModuleTask, string>();

/**
 * Which tool a call is of, as a string: calls share a worker only with calls
 * of the same tool. Refs are one object per tool on the host, but arrive
 * anew with every call in a process-tier child, hence the string.
 */
export function toolKeyOf(ref: ModuleTask): string {
  let key = toolKeys.get(ref);
  if (key === undefined) {
    key = ref.options === undefined ? ref.module : `${ref.module}\0${JSON.stringify(ref.options)}`;
    toolKeys.set(ref, key);
  }
  return key;
}
