import type { RunJob, RunOutcome } from './runner.ts';
import type { DefinitionView } from './tool-view.ts';
import type { ResolvedLimits } from './limits.ts';

/** A tool module as the host hands it to a tier: where its code is, and how to call its default export. */
export interface ModuleTask {
  /** The runnable file a worker imports (compiled when the source is TypeScript). */
  module: string;
  /** The module as the user named it, for messages. */
  source: string;
  /**
   * The sha256 (hex) of what the host compiled, when `module` is a compiled
   * copy in the compile cache: a worker imports exactly those bytes, checked
   * as it reads them, never whatever the file holds by then (see
   * src/isolation/worker/runtime/verified-import.ts).
   */
  codeHash?: string;
  /** Given when the module's default export is a factory `(options) => tool`. */
  options?: unknown;
  /** Calls of this tool that may share one worker at once (the tool's `concurrency`; 1 when absent). */
  concurrency?: number;
}

/** A tool's pool, and how long its prepareArguments may take. */
export type PrepareLimits = Pick<ResolvedLimits, 'maxMemoryMb' | 'timeoutMs'>;

/**
 * Where module tools run: worker threads of this process, or worker
 * threads of a child process. Both describe, prepare and execute a tool
 * module the same way; they differ in what a hostile tool can break.
 */
export interface ToolTier {
  /** The tool's definition as plain data, read where its code runs; the host checks it (describeView). */
  describe(ref: ModuleTask): Promise<DefinitionView>;
  /** `signal`: the batch's abort; a prepare still running when it fires ends at once. */
  prepare(
    ref: ModuleTask,
    raw: Record<string, unknown>,
    limits: PrepareLimits,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** Runs the tool's `needsApproval(args)` where its code runs, with prepare's limits; resolves to its raw answer. */
  needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown>;
  execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome>;
  close(): Promise<void>;
}
