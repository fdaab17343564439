/**
 * The messages between the host and a tool worker. piscina starts, replaces
 * and reaps the workers and carries the tasks that read a module (describe,
 * prepare, needsApproval) and the leases: a worker holding a lease runs the
 * calls the host sends it. Everything about a call — the call itself, its
 * start, its updates, its result, its host calls and its abort — travels on
 * one MessageChannel per worker, which the host binds to that worker's
 * Worker object: one message each way for a cheap call, as with a bare
 * piscina task. Which calls a worker has started it writes into a shared
 * counter instead of a message (see StartCounter), so a start costs no
 * wake-up of the host. Updates and the result share that one ordered channel, so no
 * update can ever arrive after its call's result.
 *
 * Every message a worker sends is untrusted input: the host checks it in
 * channel-messages.ts, and anything unexpected retires the worker.
 */
import type { ModuleTask } from '../../core/tier.ts';
import type { DefinitionView } from '../../core/tool-view.ts';

export type { ModuleTask };
import type { ToolResult } from '../../core/tool.ts';

/** Marks the first message a worker posts on its parent port: its end of the channel. */
export const WORKER_HELLO = 'toolpool:worker-hello';

export interface WorkerHello {
  [WORKER_HELLO]: true;
  port: object;
  /** A SharedArrayBuffer holding one Int32: the `seq` of the last call this worker started. */
  starts: SharedArrayBuffer;
}

export type WorkerTask = DescribeTask | PrepareTask | ApprovalTask | ServeTask;

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

/**
 * A lease: the worker that takes it runs the calls the host sends on its
 * channel until the host releases it. While leased, piscina counts the
 * worker busy, so it neither reaps it nor gives it another task.
 */
export interface ServeTask {
  op: 'serve';
  /** Unguessable, like run ids: the worker names it in its `serving` message. */
  leaseId: number;
}

export interface ExecuteTask extends ModuleTask {
  /**
   * Unguessable: a worker can only speak for calls it was given, because it
   * cannot name any other (see run-ids.ts).
   */
  runId: number;
  /**
   * This call's place among the calls sent to this worker (1, 2, ...,
   * wrapping at 2^31). The worker starts calls in this order and writes the
   * seq of each into its start counter before any of the tool's code runs.
   */
  seq: number;
  callId: string;
  /** The batch's run id (`ctx.runId`); not `runId`, this call's number on the worker channel. */
  batchRunId: string | undefined;
  args: unknown;
  maxResultBytes: number;
  hostFunctions: string[];
  /** true: report the heap right after the call (someone reads the usage, and the host cannot read this worker's heap itself). */
  measureUsage: boolean;
}

export type DescribeReply = { ok: true; view: DefinitionView } | { ok: false; error: string };
export type PrepareReply = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };
/** `answer` is whatever the function returned; the host checks it is a boolean. */
export type ApprovalReply = { ok: true; answer: unknown } | { ok: false; error: string };

/** Worker → host on the worker's channel. */
export type WorkerMessage =
  | ServingMessage
  | LoadedMessage
  | UpdateMessage
  | ResultMessage
  | HostCallMessage
  | ElicitMessage
  | RetireMessage
  | RefusedMessage;

/** The worker took a lease: the host may send it calls now. */
export interface ServingMessage {
  t: 'serving';
  leaseId: number;
}

/**
 * The first call of a tool in this worker: the module is imported (its
 * import is bounded by loadTimeoutMs on top of timeoutMs until then) and the
 * tool runs now; its timeout counts from here.
 */
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
  /** The worker's word on why it failed; the host keeps only a code about the call itself (reportedCode). */
  code?: string;
  /** Why this worker must not run another call (leftovers, patched builtins); absent when it is clean. */
  retire?: string;
  /** What the worker measured of the call (the host times it itself); absent when the call failed before it ran. */
  usage?: WorkerUsage;
}

/**
 * The worker's own figure for one call: its heap right after, asked for
 * only where the host cannot read it (Node 20). Checked on the host like
 * every field a worker sends, and shown only within the worker's heap
 * limit. A `cpuMs` a worker sends is checked and ignored: the host reads
 * CPU itself (usage-reading.ts).
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

/** A call sent to this worker that it did not start (it is retiring, or the call was aborted or recalled first). */
export interface RefusedMessage {
  t: 'refused';
  runId: number;
}

/** A tool's question (ctx.elicit): the request as the tool gave it, checked on the host. */
export interface ElicitMessage {
  t: 'elicit';
  runId: number;
  id: number;
  request: unknown;
}

export interface HostCallMessage {
  t: 'host-call';
  runId: number;
  id: number;
  name: string;
  args: unknown[];
}

/** Host → worker on the worker's channel. */
export type HostMessage =
  | ExecuteMessage
  | RecallMessage
  | ReleaseMessage
  | AbortMessage
  | AckMessage
  | PreloadMessage
  | HostReplyMessage;

/** Run this call: now, or when the calls before it leave room (up to its tool's concurrency at once). */
export interface ExecuteMessage {
  t: 'execute';
  task: ExecuteTask;
}

/** Give this call back if it has not started (another worker is idle); the worker answers with `refused`. */
export interface RecallMessage {
  t: 'recall';
  runId: number;
}

/** The lease ends: the worker's serve task returns, and piscina may give it other tasks or reap it. */
export interface ReleaseMessage {
  t: 'release';
  leaseId: number;
}

/** Stop a running call (its signal fires); a call sent ahead and not started is dropped instead. */
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
  /** Only TOOLPOOL_ERR_ELICITATION: the tool's ctx.elicit rejects with a ToolpoolError of that code. */
  code?: string;
}
