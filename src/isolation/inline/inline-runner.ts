import { errorMessage, stopMessage, ToolErrors } from '../../core/errors.ts';
import { stopCode } from '../../core/error-codes.ts';
import { CallContext, type ContextOwner } from '../../core/call-context.ts';
import type { ResolvedLimits } from '../../core/limits.ts';
import { executeTool } from '../../tools/own-validation.ts';
import type { RunJob, RunOutcome } from '../../core/runner.ts';
import { noOneToAsk, type ElicitRequest, type ElicitResult } from '../../core/elicitation.ts';
import { StopTimer, stopError, type StopReason, type Stoppable } from '../../core/stop-timer.ts';
import { problemWithResult } from '../../core/tool-result.ts';
import type { HostFunctions, Tool, ToolContext, ToolResult } from '../../core/tool.ts';

/**
 * Runs an inline tool on the main thread with the same contract as a pooled
 * one: the same signal, timeout and abort texts, updates dropped once the
 * call settled. What it cannot do is kill: a tool that ignores its signal is
 * abandoned after the grace period (its call gets the error result) but
 * keeps whatever it holds. Inline tools are for trusted, cheap code.
 */
export function runInline(tool: Tool, job: RunJob, host: ToolContext['host']): Promise<RunOutcome> {
  return new InlineCall(job, host).run(tool);
}

/** Host functions as inline tools see them: always async, like across a worker port. */
export function hostForInline(host: HostFunctions): ToolContext['host'] {
  const functions: ToolContext['host'] = {};
  for (const [name, fn] of Object.entries(host)) {
    functions[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args);
  }
  return functions;
}

/**
 * One inline call. It makes its AbortController only when the tool reads
 * `ctx.signal` (or a stop comes): creating one costs more than the rest of
 * a trivial call.
 */
class InlineCall implements Stoppable, ContextOwner {
  readonly limits: ResolvedLimits;
  readonly context: ToolContext;
  readonly #startedAt = Date.now();
  /** The same moment on the monotonic clock, for `runningMs`. */
  readonly #runningSince = performance.now();
  #controller: AbortController | undefined;
  #stopReason: StopReason | undefined;
  #settled = false;
  #abandon: (() => void) | undefined;

  constructor(
    private readonly job: RunJob,
    host: ToolContext['host'],
  ) {
    this.limits = job.limits;
    this.context = new CallContext(this, job.callId, host, job.runId);
  }

  signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.#stopReason && !this.#controller.signal.aborted) this.#controller.abort(stopError(this.#stopReason));
    return this.#controller.signal;
  }

  update(partial: ToolResult): void {
    if (!this.#settled) void this.job.onUpdate(partial);
  }

  /** Asked on the host with the call's own signal: a stop (timeout, abort) ends the question at once. */
  elicit(request: ElicitRequest): Promise<ElicitResult> {
    if (!this.job.elicit) return noOneToAsk();
    return this.job.elicit(request, this.signal());
  }

  async run(tool: Tool): Promise<RunOutcome> {
    const stopTimer = new StopTimer(this, this.job.signal);
    let outcome: RunOutcome;
    try {
      const pending = executeTool(tool, this.job.args, this.context);
      const value = pending instanceof Promise ? await Promise.race([pending, this.#abandoned()]) : pending;
      this.#settled = true;
      if (stopTimer.stopped) {
        outcome = stopOutcome(stopTimer, this.limits);
      } else {
        const problem = problemWithResult(value);
        outcome = problem
          ? { ok: false, error: ToolErrors.invalidResult(problem), code: 'INVALID_RESULT' }
          : { ok: true, result: value as ToolResult };
      }
    } catch (error) {
      this.#settled = true;
      outcome = stopTimer.stopped
        ? stopOutcome(stopTimer, this.limits)
        : { ok: false, error: errorMessage(error), code: 'THREW' };
    } finally {
      stopTimer.dispose();
    }
    // Never queued; no CPU or heap figure: the main thread's are not the tool's.
    outcome.usage = { queuedMs: 0, runningMs: performance.now() - this.#runningSince };
    return outcome;
  }

  startedAt(): number {
    return this.#startedAt;
  }

  cancelIfQueued(): boolean {
    return false; // an inline call starts at once
  }

  requestStop(reason: StopReason): void {
    this.#stopReason = reason;
    this.#controller?.abort(stopError(reason));
  }

  kill(): void {
    this.#abandon?.();
  }

  #abandoned(): Promise<undefined> {
    return new Promise((resolve) => (this.#abandon = () => resolve(undefined)));
  }
}

function stopOutcome(timer: StopTimer, limits: ResolvedLimits): RunOutcome {
  const { reason, how } = timer.stopped!;
  return { ok: false, error: stopMessage(reason, how, limits.timeoutMs), code: stopCode(reason) };
}
