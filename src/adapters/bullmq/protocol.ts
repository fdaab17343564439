import { RemoteErrors, ToolErrors, truncate } from '../../core/errors.ts';
import { checkReceivedOutcome, checkUsage } from '../../isolation/process/child-messages.ts';
import { checkPayload } from '../../isolation/worker/payload.ts';
import { MIN_MEMORY_MB } from '../../core/limits.ts';
import type { RemoteOutcome } from '../../core/remote.ts';
import type { Isolation, ToolLimits, ToolResult } from '../../index.ts';

// What host and worker machines say to each other through BullMQ: a job's
// data is the call, its return value the answer, its progress the updates
// and heartbeats. Anyone who can write to Redis can write any of these, so
// each side checks what it reads before it uses a field of it.

export const PROTOCOL = 1;

/** The longest heartbeat interval a call may ask for. */
export const MAX_HEARTBEAT_MS = 60_000;

/** A job's data: one call, as the host validated it. */
export interface CallData {
  toolpool: typeof PROTOCOL;
  callId: string;
  /** The host's run id for the call (`ctx.runId`), when its batch had one. */
  runId?: string;
  tool: string;
  args: Record<string, unknown>;
  /** The host's limits for the call; the worker machine applies the tighter of these and its own. */
  limits: Required<ToolLimits>;
  /** The host's tier for the tool: the least the worker machine may run it in. */
  isolation: Isolation;
  moduleHash: string;
  /** How often the worker machine says the call is still running (the host counts it lost after lostAfterMs without a word). */
  heartbeatMs: number;
  /**
   * The host's waiting session: the host keeps the key `channels.hostWaiting(queue, hostSession)` alive (expiring
   * after lostAfterMs) while it waits for its calls, and a worker machine starts a call only while that key exists.
   * A host that gave up on its calls (Redis away past lostAfterMs) starts a new session, so a job that comes back
   * with Redis (an append-only file) never runs after its host told the model it failed. Absent from older hosts.
   */
  hostSession?: string;
}

/** A job's return value: the outcome of the call, or the worker machine's reason not to run it. */
export type CallAnswer = { toolpool: typeof PROTOCOL } & RemoteOutcome;

/** A job's progress: an update of the running call, or only a sign of life. */
export type CallProgress =
  | { toolpool: typeof PROTOCOL; update: ToolResult }
  | { toolpool: typeof PROTOCOL; beat: true };

/** Redis keys and channels of toolpool's own, beside BullMQ's (`bull:<queue>:...`). */
export const channels = {
  /** Hosts publish the job id of a call to stop here; every worker machine of the queue listens. */
  cancel: (queue: string) => `toolpool:${queue}:cancel`,
  /** Set by every live worker machine of the queue with a short expiry: while it exists, some machine serves the queue. */
  alive: (queue: string) => `toolpool:${queue}:alive`,
  /** Kept alive by a host while it waits for the calls it sent in that session (see CallData.hostSession). */
  hostWaiting: (queue: string, session: string) => `toolpool:${queue}:host:${session}`,
  /** BullMQ's event stream of the queue (its default prefix). */
  events: (queue: string) => `bull:${queue}:events`,
};

const ISOLATIONS: ReadonlySet<string> = new Set(['worker', 'process', 'sandbox']);
const LIMIT_KEYS = ['timeoutMs', 'maxMemoryMb', 'maxResultBytes', 'abortGraceMs'] as const;

/** On a worker machine: the job's data as a call, or what is wrong with it. */
export function checkCallData(data: unknown): CallData | string {
  if (!isObject(data)) return 'its data is not an object';
  if (data.toolpool !== PROTOCOL)
    return `it speaks protocol ${truncate(JSON.stringify(data.toolpool) ?? 'none', 40)}, not ${PROTOCOL}`;
  const { callId, tool, args, limits, isolation, moduleHash, heartbeatMs } = data;
  if (!isText(callId, 512)) return 'it has no call id';
  if (data.runId !== undefined && !isText(data.runId, 512)) return 'its run id is not a text';
  if (!isText(tool, 200)) return 'it names no tool';
  if (!isObject(args)) return 'its arguments are not an object';
  if (!isObject(limits) || !LIMIT_KEYS.every((key) => isPositive(limits[key])))
    return 'its limits are not positive numbers';
  if ((limits.maxMemoryMb as number) < MIN_MEMORY_MB) return `its maxMemoryMb is under ${MIN_MEMORY_MB}`;
  if (typeof isolation !== 'string' || !ISOLATIONS.has(isolation)) return 'it names no isolation tier';
  if (!isText(moduleHash, 128)) return 'it has no module hash';
  if (!isPositive(heartbeatMs) || heartbeatMs > MAX_HEARTBEAT_MS)
    return `its heartbeat interval is not a number of ms up to ${MAX_HEARTBEAT_MS}`;
  if (
    data.hostSession !== undefined &&
    !(typeof data.hostSession === 'string' && /^[0-9a-f]{8,64}$/.test(data.hostSession))
  )
    return 'its host session is not a hex id';
  return data as unknown as CallData;
}

/** On the host: the job's return value (as BullMQ's event stream holds it, JSON) as an outcome, checked like any untrusted result. */
export function readAnswer(json: string, maxResultBytes: number, queue: string): RemoteOutcome {
  // The text is bounded before it is parsed (JSON escapes can make a fitting result's text up to six times longer); the
  // result itself is measured after, as any result is.
  if (json.length > textBound(maxResultBytes))
    return { ok: false, error: ToolErrors.resultTooLarge('result', json.length, maxResultBytes) };
  const answer = parse(json);
  if (!isObject(answer) || answer.toolpool !== PROTOCOL)
    return { ok: false, error: RemoteErrors.badAnswer(queue, `it returned ${truncate(json, 80)}`) };
  const usage = answer.usage === undefined ? undefined : checkUsage(answer.usage);
  if (typeof usage === 'string') return { ok: false, error: RemoteErrors.badAnswer(queue, usage) };
  const withUsage = (outcome: RemoteOutcome): RemoteOutcome => (usage ? { ...outcome, usage } : outcome);
  if (answer.ok === false && typeof answer.error === 'string')
    return withUsage({ ok: false, error: truncate(answer.error, MAX_ERROR_CHARS) });
  if (answer.ok !== true)
    return { ok: false, error: RemoteErrors.badAnswer(queue, 'an answer that is neither a result nor an error') };
  return checkReceivedOutcome(withUsage({ ok: true, result: answer.result as ToolResult }), maxResultBytes);
}

/** On the host: a job's progress (JSON) as an update, a heartbeat, or what is wrong with it. */
export function readProgress(
  json: string,
  maxResultBytes: number,
  queue: string,
): { update: ToolResult } | { beat: true } | { problem: string } {
  if (json.length > textBound(maxResultBytes))
    return { problem: ToolErrors.resultTooLarge('update', json.length, maxResultBytes) };
  const progress = parse(json);
  if (!isObject(progress) || progress.toolpool !== PROTOCOL)
    return { problem: RemoteErrors.badAnswer(queue, `it reported progress ${truncate(json, 80)}`) };
  if (progress.beat === true) return { beat: true };
  const problem = checkPayload(progress.update, 'update', maxResultBytes);
  return problem ? { problem } : { update: progress.update as ToolResult };
}

/** The longest JSON text of an answer or update whose result can fit `maxResultBytes`: escapes, and the envelope. */
const textBound = (maxResultBytes: number) => 6 * maxResultBytes + 64 * 1024;
/** Error texts from a worker machine are cut to this many characters, as the process tier's are. */
const MAX_ERROR_CHARS = 4_000;

function parse(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= max;
const isPositive = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0;
