import type { CallElicit } from './elicitation.ts';
import type { ToolErrorCode } from './error-codes.ts';
import type { ResolvedLimits } from './limits.ts';
import type { ToolResult } from './tool.ts';

/** One call handed to a runner (inline, worker pool or process tier). */
export interface RunJob {
  callId: string;
  /** The batch's run id, for the tool's `ctx.runId`. */
  runId?: string;
  args: unknown;
  limits: ResolvedLimits;
  signal?: AbortSignal;
  onUpdate: (partial: ToolResult) => void | Promise<void>;
  /**
   * false when nobody reads this call's usage (no tool_end listener): a
   * worker then skips its CPU and heap reads, which cost a few µs of a
   * trivial call. queuedMs and runningMs are timed on the host either way.
   */
  measureUsage?: boolean;
  /**
   * Called when this call ignored its signal and its worker thread could not
   * be terminated (it is inside a native call), with the error text the call
   * gets. The process tier's child sets it: the host then kills the child.
   */
  onUnstoppable?: (error: string) => void;
  /**
   * Called when this call's worker thread was terminated (for its own stop
   * or for another call's): how the call ended is then known within
   * VERDICT_AFTER_MS. The process tier's child sets it, so that the host
   * waits that long only for a child that said it terminated a thread.
   */
  onTerminated?: () => void;
  /**
   * The call's `ctx.elicit` on the host: the runner relays the tool's
   * request to it (unchecked: it checks), with a signal that fires when the
   * call is stopped or ends. Absent: `ctx.elicit` rejects (no one can answer).
   */
  elicit?: CallElicit;
}

/**
 * What one call cost, as the runner measured it; copied into `tool_end`
 * (see ToolEndEvent for what each figure means). Absent on an outcome made
 * without running the tool (aborted or timed out while queued, pool closed).
 */
export interface RunUsage {
  queuedMs: number;
  runningMs: number;
  cpuMs?: number;
  heapUsedBytes?: number;
}

/**
 * Runners never throw for what a tool does: every failure is an error text,
 * with the code the host gives it (`tool_end`'s `errorCode`; FAILED when absent).
 */
export type RunOutcome = ({ ok: true; result: ToolResult } | { ok: false; error: string; code?: ToolErrorCode }) & {
  usage?: RunUsage;
  /** Whether the call ran is unknown (a remote call lost with its machine): a ledger keeps it as started, never ended. */
  unsure?: true;
};

/** The outcome with `waitedMs` more queue time (a wait before the runner got the call); unchanged when the call never ran. */
export function withQueuedBefore(outcome: RunOutcome, waitedMs: number): RunOutcome {
  const { usage } = outcome;
  if (!usage || !(waitedMs > 0)) return outcome;
  return { ...outcome, usage: { ...usage, queuedMs: usage.queuedMs + waitedMs } };
}

/** How the executor reaches a tool's code, wherever it runs. */
export interface ToolRunner {
  prepare(raw: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Runs the tool's `needsApproval` function on validated arguments; resolves to what it returned (checked by the caller). */
  needsApproval(args: Record<string, unknown>): Promise<unknown>;
  execute(job: RunJob): Promise<RunOutcome>;
}
