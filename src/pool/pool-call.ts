import { ToolErrors, boundText, errorMessage, stopMessage } from '../errors.ts';
import type { ResolvedLimits } from '../limits.ts';
import type { RunJob, RunOutcome, RunUsage } from '../runner.ts';
import { StopTimer, type StopReason, type Stoppable } from '../stop-timer.ts';
import type { ToolResult } from '../tool.ts';
import { checkPayload } from './payload.ts';
import type { ExecuteTask, ModuleTask, ResultMessage, WorkerUsage } from './protocol.ts';
import type { WorkerChannel } from './worker-channel.ts';

/**
 * How many updates of one call may be unconsumed on the host before its
 * worker is breaking flow control (the worker's own window, plus the last
 * update it posts when the call settles).
 */
export const UPDATE_WINDOW = 64;
/** After a hard kill, how long to wait for the thread to exit before the call is ended anyway. */
const KILL_SETTLE_MS = 1_000;

/** What a call may ask of its pool. */
export interface CallControls {
  readonly loadTimeoutMs: number;
  /** A call that has not started is dropped; every worker hears it, so the one that gets its task skips it. */
  cancelQueued(call: PoolCall): void;
  acknowledgeLater(call: PoolCall): void;
}

/**
 * One call of a pool, as the host sees it. Everything that decides its fate
 * is host-side state: when it started (the host's clock, when its start
 * message arrived), which worker runs it (the channel that message came on),
 * how many updates it has consumed, and how it was stopped.
 */
export class PoolCall implements Stoppable {
  channel: WorkerChannel | undefined;
  /** Times this call's task was handed to piscina (a call no worker started is requeued). */
  attempts = 0;
  received = 0;
  consumed = 0;
  acked = 0;
  /** piscina reported the task done (or failed). */
  taskDone = false;
  /** A retiring worker got the task and did not start it. */
  refused = false;
  /** When the result arrived (0 before). */
  resultAt = 0;
  outcome: RunOutcome | undefined;
  readonly queuedAt = Date.now();
  readonly done: Promise<RunOutcome>;
  readonly limits: ResolvedLimits;
  #resolve!: (outcome: RunOutcome) => void;
  #startedAt = 0;
  #loading = false;
  /** For the call's usage, on the monotonic clock: handed to this pool; its start message arrived (not reset by loaded()). */
  readonly #handedAt = performance.now();
  #runningSince = 0;
  readonly #stopTimer: StopTimer;

  constructor(
    readonly runId: number,
    private readonly job: RunJob,
    private readonly ref: ModuleTask,
    private readonly controls: CallControls,
  ) {
    this.done = new Promise((resolve) => (this.#resolve = resolve));
    this.limits = job.limits;
    this.#stopTimer = new StopTimer(this, job.signal);
  }

  get started(): boolean {
    return this.#startedAt !== 0;
  }

  task(hostFunctions: string[]): ExecuteTask {
    const { callId, args, limits } = this.job;
    const measureUsage = this.job.measureUsage !== false;
    return { op: 'execute', ...this.ref, callId, args, runId: this.runId, maxResultBytes: limits.maxResultBytes, hostFunctions, measureUsage };
  }

  // Stoppable: the shared two-step stop.

  /** The timeout counts from the start; a first import of the module gets loadTimeoutMs on top. */
  startedAt(): number {
    if (this.#startedAt === 0) return 0;
    return this.#loading ? this.#startedAt + this.controls.loadTimeoutMs : this.#startedAt;
  }

  cancelIfQueued(): boolean {
    if (this.started) return false;
    this.controls.cancelQueued(this);
    this.#settle(this.#stopOutcome() ?? { ok: false, error: ToolErrors.abortedBeforeStart() });
    return true;
  }

  requestStop(reason: StopReason): void {
    this.channel?.post({ t: 'abort', runId: this.runId, reason });
  }

  kill(): void {
    this.channel?.kill();
    setTimeout(() => this.#settle(this.#stopOutcome()!), KILL_SETTLE_MS).unref();
  }

  // What the worker's channel reports.

  start(channel: WorkerChannel, loading: boolean): void {
    this.channel = channel;
    this.#startedAt = Date.now();
    this.#runningSince = performance.now();
    this.#loading = loading;
    // Cancelled while its task was on its way: the worker took it before it heard. Stop it like a running call.
    if (this.outcome) {
      this.requestStop('aborted');
      setTimeout(() => channel.retireIfRunning(this, 'a cancelled call kept running'), this.limits.abortGraceMs).unref();
    }
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
    if (this.received - this.consumed > UPDATE_WINDOW + 1) return 'it ignored flow control (too many unconsumed updates)';
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
    this.#settle(message.ok ? { ok: true, result: message.result! } : { ok: false, error: boundText(message.error!) }, message.usage);
    return undefined;
  }

  /** Ended by the host for a reason of its own (protocol violation, retirement, close). */
  fail(error: string): void {
    this.#settle(this.#stopOutcome() ?? { ok: false, error });
  }

  /** Its worker thread ended while the call ran. Memory first: a worker out of memory may die during a stop's grace period. */
  workerDied(error: unknown, exitCode: number): void {
    if (isOutOfMemory(error)) return this.#settle({ ok: false, error: ToolErrors.memoryLimit(this.limits.maxMemoryMb) });
    const stop = this.#stopOutcome();
    if (stop) return this.#settle(stop);
    this.#settle({ ok: false, error: error === undefined ? ToolErrors.workerExited(exitCode) : ToolErrors.workerCrashed(errorMessage(error)) });
  }

  #stopOutcome(): RunOutcome | undefined {
    const stop = this.#stopTimer.stopped;
    return stop ? { ok: false, error: stopMessage(stop.reason, stop.how, this.limits.timeoutMs) } : undefined;
  }

  /** `outcome` is always a fresh object: a call that started gets its usage on it. */
  #settle(outcome: RunOutcome, worker?: WorkerUsage): void {
    if (this.outcome) return;
    if (this.#runningSince !== 0) outcome.usage = callUsage(this.#handedAt, this.#runningSince, worker);
    this.outcome = outcome;
    this.#stopTimer.dispose();
    this.#resolve(outcome);
  }
}

/**
 * Queued until its start message arrived, running from then to now (the
 * result, or the host ending the call); the worker's CPU and heap figures
 * when its result carried them (checked in channel-messages.ts).
 */
function callUsage(handedAt: number, runningSince: number, worker: WorkerUsage | undefined): RunUsage {
  const usage: RunUsage = { queuedMs: runningSince - handedAt, runningMs: performance.now() - runningSince };
  if (worker?.cpuMs !== undefined) usage.cpuMs = worker.cpuMs;
  if (worker?.heapUsedBytes !== undefined) usage.heapUsedBytes = worker.heapUsedBytes;
  return usage;
}

function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}
