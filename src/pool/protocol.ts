/**
 * The messages between the host and a tool worker. Tasks and replies travel
 * through piscina; progress, aborts and the per-worker hello travel on one
 * MessageChannel per worker (a fresh channel per call would cost a third of
 * a round trip), tagged with the call's run id.
 */
import type { ToolInfo } from '../tool-info.ts';
import type { ToolResult } from '../tool.ts';

/** Marks the first message a worker posts on its parent port: its own channel to the host. */
export const WORKER_HELLO = 'toolpool:worker-hello';

export interface WorkerHello {
  [WORKER_HELLO]: true;
  threadId: number;
  /** Progress out, aborts in. */
  port: MessagePortLike;
  /** A separate port for comlink host calls, so neither protocol sees the other's messages. */
  hostPort: MessagePortLike;
}

// Kept structural so this file has no runtime imports and stays cheap to bundle into workers.
type MessagePortLike = object;

export type WorkerTask = DescribeTask | PrepareTask | ApprovalTask | ExecuteTask;

export interface ModuleTask {
  /** The runnable file a worker imports (compiled when the source is TypeScript). */
  module: string;
  /** The module as the user named it, for messages. */
  source: string;
  /** Given when the module's default export is a factory `(options) => tool`. */
  options?: unknown;
}

export interface DescribeTask extends ModuleTask {
  op: 'describe';
}

export interface PrepareTask extends ModuleTask {
  op: 'prepare';
  raw: Record<string, unknown>;
}

/** Runs the tool's `needsApproval(args)` function on validated arguments (a sibling of prepare). */
export interface ApprovalTask extends ModuleTask {
  op: 'needsApproval';
  args: Record<string, unknown>;
}

export interface ExecuteTask extends ModuleTask {
  op: 'execute';
  runId: number;
  callId: string;
  /** Index into the shared call table (start time, consumed updates). */
  slot: number;
  args: unknown;
  maxResultBytes: number;
  hostFunctions: string[];
}

export type DescribeReply = { ok: true; info: ToolInfo } | { ok: false; error: string };
export type PrepareReply = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };
/** `answer` is whatever the function returned; the host checks it is a boolean. */
export type ApprovalReply = { ok: true; answer: unknown } | { ok: false; error: string };

export type ExecuteReply =
  | ({
      threadId: number;
      /** How many updates the worker posted for this call; the host drains until it has them all. */
      updates: number;
    } & ({ ok: true; result: ToolResult } | { ok: false; error: string }))
  /** The host cancelled the call before this worker took it. */
  | { cancelled: true };

/** Worker → host on the worker's channel. */
export interface UpdateMessage {
  runId: number;
  /** Checked in the worker by problemWithPayload, so it is certain to clone. */
  partial: ToolResult;
}

/** Host → worker on the worker's channel. */
export interface AbortMessage {
  runId: number;
  reason: 'aborted' | 'timeout';
}

/** Host → a new worker on its channel: the tool modules to import before any call arrives. */
export interface PreloadMessage {
  preload: ModuleTask[];
}
