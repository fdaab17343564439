/**
 * The messages between the host and a tool worker. piscina carries the
 * tasks (it picks the worker and keeps the workers alive); everything about
 * a running call — its start, its updates, its result, its host calls and
 * its abort — travels on one MessageChannel per worker, which the host binds
 * to that worker's Worker object. Updates and the result share that one
 * ordered channel, so no update can ever arrive after its call's result.
 *
 * Every message a worker sends is untrusted input: the host checks it in
 * channel-messages.ts, and anything unexpected retires the worker.
 */
import type { ToolInfo } from '../tool-info.ts';
import type { ToolResult } from '../tool.ts';

/** Marks the first message a worker posts on its parent port: its end of the channel. */
export const WORKER_HELLO = 'toolpool:worker-hello';

export interface WorkerHello {
  [WORKER_HELLO]: true;
  port: object;
}

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
  /**
   * Unguessable: a worker can only speak for calls it was given, because it
   * cannot name any other (see run-ids.ts).
   */
  runId: number;
  callId: string;
  args: unknown;
  maxResultBytes: number;
  hostFunctions: string[];
  /** false: report no CPU or heap figure in the result (nobody reads them; see RunJob.measureUsage). */
  measureUsage: boolean;
}

export type DescribeReply = { ok: true; info: ToolInfo } | { ok: false; error: string };
export type PrepareReply = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };
/** `answer` is whatever the function returned; the host checks it is a boolean. */
export type ApprovalReply = { ok: true; answer: unknown } | { ok: false; error: string };

/** Worker → host on the worker's channel. */
export type WorkerMessage = StartMessage | LoadedMessage | UpdateMessage | ResultMessage | HostCallMessage | RetireMessage | RefusedMessage;

/** Sent when the worker takes the call, before any of the tool's code runs. */
export interface StartMessage {
  t: 'start';
  runId: number;
  /** The tool module is not imported yet: its import is bounded by loadTimeoutMs on top of timeoutMs. */
  loading: boolean;
}

/** After a start with `loading`: the module is imported and the tool runs now; its timeout counts from here. */
export interface LoadedMessage {
  t: 'loaded';
  runId: number;
}

export interface UpdateMessage {
  t: 'update';
  runId: number;
  partial: ToolResult;
}

export interface ResultMessage {
  t: 'result';
  runId: number;
  ok: boolean;
  result?: ToolResult;
  error?: string;
  /** Why this worker must not run another call (leftovers, patched builtins); absent when it is clean. */
  retire?: string;
  /** What the worker measured of the call (the host times it itself); absent when the call failed before it ran. */
  usage?: WorkerUsage;
}

/**
 * The worker's own figures for one call: its thread's CPU time during
 * `execute` (Node 22+ only: `process.threadCpuUsage`) and its heap right
 * after. Checked on the host like every field a worker sends.
 */
export interface WorkerUsage {
  cpuMs?: number;
  heapUsedBytes?: number;
}

/** The worker asks to be retired (a call left handles open); runId is 0. */
export interface RetireMessage {
  t: 'retire';
  runId: 0;
  reason: string;
}

/** A retiring worker got a task: it did not start it, so the host sends it elsewhere. */
export interface RefusedMessage {
  t: 'refused';
  runId: number;
}

export interface HostCallMessage {
  t: 'host-call';
  runId: number;
  id: number;
  name: string;
  args: unknown[];
}

/** Host → worker on the worker's channel. */
export type HostMessage = AbortMessage | AckMessage | PreloadMessage | HostReplyMessage;

export interface AbortMessage {
  t: 'abort';
  runId: number;
  reason: 'aborted' | 'timeout';
}

/** Flow control: the host has consumed this many of the call's updates. */
export interface AckMessage {
  t: 'ack';
  runId: number;
  consumed: number;
}

/** The tool modules a new worker imports before any call arrives. */
export interface PreloadMessage {
  t: 'preload';
  preload: ModuleTask[];
}

export interface HostReplyMessage {
  t: 'host-reply';
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}
