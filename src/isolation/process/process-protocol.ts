/**
 * Messages between the host and the process tier's child, over toolpool's
 * framed channel on the child's fds 0 and 3 (frame-channel.ts: structured clone in
 * length-prefixed frames). The channel is ordered, so a call's updates
 * always arrive before its result.
 */
import type { ResolvedLimits } from '../../core/limits.ts';
import type { ModuleTask } from '../worker/protocol.ts';
import type { RunOutcome } from '../../core/runner.ts';
import type { ToolErrorCode } from '../../core/error-codes.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import type { PrepareLimits } from '../../core/tier.ts';
import type { ToolResult } from '../../core/tool.ts';

export interface ChildInit {
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  env: Record<string, string>;
  /** The flags of the child's workers; 'inherit': the child's own (where workers refuse permission flags). */
  execArgv: string[] | 'inherit';
  hostFunctionNames: string[];
  defaultMemoryMb: number;
  /** How long importing a tool module to read its definition may take. */
  loadTimeoutMs: number;
  /** V8 code range of each worker, so Node's own share of the memory cap stays small (see node-reservation.ts). */
  codeRangeSizeMb?: number;
  /** V8 young generation of each worker: bounded, so a worker's heap limit trips before the child's cap (see node-reservation.ts). */
  youngGenerationSizeMb?: number;
  /** Descriptors the child inherited from the host without close-on-exec: closed before any tool runs. */
  closeFds?: number[];
  /** Modules the host compiled for the child (source → compiled file): the child may not run esbuild under permissions. */
  precompiled?: Record<string, { file: string; code?: string }>;
  /** The child's cap on open descriptors; past three quarters of it, the child asks to be replaced. */
  maxOpenFiles: number;
}

export type HostToChild =
  | { type: 'init'; init: ChildInit }
  | { type: 'describe'; id: number; ref: ModuleTask }
  | { type: 'prepare'; id: number; ref: ModuleTask; raw: Record<string, unknown>; limits: PrepareLimits }
  | { type: 'needsApproval'; id: number; ref: ModuleTask; args: Record<string, unknown>; limits: PrepareLimits }
  | {
      type: 'execute';
      id: number;
      ref: ModuleTask;
      callId: string;
      runId?: string;
      args: unknown;
      limits: ResolvedLimits;
      measureUsage: boolean;
    }
  | { type: 'abort'; id: number }
  | { type: 'host-reply'; id: number; ok: true; value: unknown }
  | { type: 'host-reply'; id: number; ok: false; error: string; code?: 'TOOLPOOL_ERR_ELICITATION' }
  | { type: 'close' };

export type ChildToHost =
  | { type: 'ready' }
  | { type: 'described'; id: number; ok: true; view: DefinitionView }
  | { type: 'prepared'; id: number; ok: true; args: Record<string, unknown> }
  | { type: 'approvalAnswered'; id: number; ok: true; answer: unknown }
  // `code` is set only by the host for a failure of its own (the child's `failed` is parsed without it).
  | { type: 'failed'; id: number; error: string; code?: ToolErrorCode }
  | { type: 'update'; id: number; partial: ToolResult }
  | { type: 'executed'; id: number; outcome: RunOutcome }
  /** The call ignored its signal and its thread could not be terminated (a native call): the host SIGKILLs the child. `error` is the call's text. */
  | { type: 'unstoppable'; id: number; error: string }
  /** The call's thread was terminated: its verdict comes within VERDICT_AFTER_MS (the host's deadline makes room once). */
  | { type: 'terminated'; id: number }
  | { type: 'host-call'; id: number; name: string; args: unknown[] }
  /** A tool's question (ctx.elicit) in the call `id`; the host answers with a host-reply to `qid`. */
  | { type: 'elicit'; id: number; qid: number; request: unknown }
  /** The child holds this many open descriptors, left by tools: it must be replaced before they break its calls. */
  | { type: 'exhausted'; openFiles: number };
