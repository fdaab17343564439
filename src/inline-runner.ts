import { errorMessage, stopMessage, ToolErrors } from './errors.ts';
import type { ResolvedLimits } from './limits.ts';
import type { RunJob, RunOutcome } from './runner.ts';
import { StopTimer, stopError } from './stop-timer.ts';
import { problemWithResult } from './tool-result.ts';
import type { HostFunctions, Tool, ToolContext, ToolResult } from './tool.ts';

/**
 * Runs an inline tool on the main thread with the same contract as a pooled
 * one: the same signal, timeout and abort texts, updates dropped once the
 * call settled. What it cannot do is kill: a tool that ignores its signal is
 * abandoned after the grace period (its call gets the error result) but
 * keeps whatever it holds. Inline tools are for trusted, cheap code.
 */
export async function runInline(tool: Tool, job: RunJob, host: HostFunctions): Promise<RunOutcome> {
  const controller = new AbortController();
  const startedAt = Date.now();
  let settled = false;
  let abandon!: () => void;
  const abandoned = new Promise<undefined>((resolve) => (abandon = () => resolve(undefined)));
  const stopTimer = new StopTimer(
    {
      limits: job.limits,
      startedAt: () => startedAt,
      requestStop: (reason) => controller.abort(stopError(reason)),
      cancelIfQueued: () => false,
      kill: () => abandon(),
    },
    job.signal,
  );
  const context: ToolContext = {
    callId: job.callId,
    signal: controller.signal,
    onUpdate: (partial) => {
      if (!settled) void job.onUpdate(partial);
    },
    host: hostForInline(host),
  };
  try {
    const value = await Promise.race([Promise.resolve().then(() => tool.execute(job.args as never, context)), abandoned]);
    settled = true;
    if (stopTimer.stopped) return stopOutcome(stopTimer, job.limits);
    const problem = problemWithResult(value);
    return problem ? { ok: false, error: ToolErrors.invalidResult(problem) } : { ok: true, result: value as ToolResult };
  } catch (error) {
    settled = true;
    return stopTimer.stopped ? stopOutcome(stopTimer, job.limits) : { ok: false, error: errorMessage(error) };
  } finally {
    stopTimer.dispose();
  }
}

function stopOutcome(timer: StopTimer, limits: ResolvedLimits): RunOutcome {
  const { reason, how } = timer.stopped!;
  return { ok: false, error: stopMessage(reason, how, limits.timeoutMs) };
}

function hostForInline(host: HostFunctions): ToolContext['host'] {
  const functions: ToolContext['host'] = {};
  for (const [name, fn] of Object.entries(host)) {
    functions[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown)(...args);
  }
  return functions;
}
