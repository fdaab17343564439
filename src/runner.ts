import type { ResolvedLimits } from './limits.ts';
import type { ToolResult } from './tool.ts';

/** One call handed to a runner (inline, worker pool or process tier). */
export interface RunJob {
  callId: string;
  args: unknown;
  limits: ResolvedLimits;
  signal?: AbortSignal;
  onUpdate: (partial: ToolResult) => void | Promise<void>;
}

/** Runners never throw for what a tool does: every failure is an error text. */
export type RunOutcome = { ok: true; result: ToolResult } | { ok: false; error: string };

/** How the executor reaches a tool's code, wherever it runs. */
export interface ToolRunner {
  prepare(raw: Record<string, unknown>, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** Runs the tool's `needsApproval` function on validated arguments; resolves to what it returned (checked by the caller). */
  needsApproval(args: Record<string, unknown>): Promise<unknown>;
  execute(job: RunJob): Promise<RunOutcome>;
}
