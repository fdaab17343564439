import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PendingApproval } from '../executor/approval.ts';
import { AgentErrors } from '../core/errors.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { toolCallsOf, type Message, type UserMessage } from '../core/messages.ts';
import type { ToolCall } from '../core/tool.ts';
import type { PausedBatch } from './approvals.ts';
import { ToolpoolTypeError } from '../core/error-codes.ts';

/** Which snapshots this version of toolpool reads. Bump it when the shape changes. */
export const SNAPSHOT_FORMAT = 'toolpool.agent';
/**
 * 2: approved calls keep their arguments (they run with exactly those), and a snapshot may carry an integrity check.
 * 3: the agent's run id (its calls' key in the executor's ledger), so a restored agent never runs a call that already ran.
 */
export const SNAPSHOT_VERSION = 3;

/**
 * An agent's state as plain JSON: store it anywhere and give it to
 * `new Agent({ model, executor, snapshot })`, in this process or another.
 */
export interface AgentSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  /** The agent's run id: its tool calls are keyed by it in the executor's ledger. */
  runId: string;
  messages: Message[];
  /** Queued `steer()` messages, oldest first. */
  steering: UserMessage[];
  /** Queued `followUp()` messages, oldest first. */
  followUps: UserMessage[];
  /** The batch that waits for a person: its undecided calls and the decisions given so far. */
  approval?: PausedBatch;
  /** With `snapshotSecret`: an HMAC-SHA256 of everything else, keyed by the secret (`hmac-sha256:<hex>`). */
  integrity?: string;
}

export type AgentState = Omit<AgentSnapshot, 'format' | 'version' | 'integrity'>;

/** A secret for snapshot integrity: text or bytes. */
export type SnapshotSecret = string | Uint8Array;

/**
 * Checks a pending (or approved) call of a snapshot against its tool call
 * in the transcript: returns what does not match, or nothing. Given by the
 * executor, which knows the tools (see CHECK_PENDING).
 */
export type PendingCallCheck = (
  call: ToolCall,
  entry: PendingApproval,
  decision: 'pending' | 'approved',
) => string | undefined;

/** A deep copy through JSON: what comes out is detached from the agent and certain to serialize. */
export function takeSnapshot(state: AgentState, secret?: SnapshotSecret): AgentSnapshot {
  const snapshot: AgentSnapshot = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, ...state };
  if (!state.approval) delete snapshot.approval;
  const copy = JSON.parse(JSON.stringify(snapshot)) as AgentSnapshot;
  if (secret !== undefined) copy.integrity = integrityOf(copy, secret);
  return copy;
}

/**
 * Reads a snapshot back. The format and version are checked first, so a
 * snapshot from another version is refused instead of misread; with a
 * secret, the integrity check next (nothing of a snapshot that fails it is
 * read); then the shape, so a paused batch points at real, unanswered tool
 * calls of its own transcript, with those calls' tools and arguments.
 * Approvals survive only a snapshot with a secret (see `undecided`).
 */
export function readSnapshot(value: unknown, secret?: SnapshotSecret, checkCall?: PendingCallCheck): AgentState {
  if (typeof value !== 'object' || value === null)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_SNAPSHOT', AgentErrors.badSnapshot('it is not an object'));
  const snapshot = value as Partial<Record<keyof AgentSnapshot, unknown>>;
  if (snapshot.format !== SNAPSHOT_FORMAT)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot(`its format is ${JSON.stringify(snapshot.format)}, not "${SNAPSHOT_FORMAT}"`),
    );
  if (snapshot.version !== SNAPSHOT_VERSION)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.snapshotVersion(snapshot.version, SNAPSHOT_VERSION),
    );
  if (secret !== undefined) checkIntegrity(snapshot as AgentSnapshot, secret);
  const messages = checkMessages(snapshot.messages, 'messages');
  const steering = checkMessages(snapshot.steering, 'steering') as UserMessage[];
  const followUps = checkMessages(snapshot.followUps, 'followUps') as UserMessage[];
  if (steering.concat(followUps).some((message) => message.role !== 'user'))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot('steering and followUps must hold user messages'),
    );
  const runId = snapshot.runId;
  if (typeof runId !== 'string' || runId.length === 0 || runId.length > 512)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot('runId must be a non-empty string of at most 512 characters'),
    );
  const state: AgentState = { runId, messages, steering, followUps };
  if (snapshot.approval !== undefined) {
    const approval = checkApproval(snapshot.approval, messages, checkCall);
    state.approval = secret === undefined ? undecided(approval, messages) : approval;
  }
  return state;
}

/**
 * Without a secret nothing proves that a person approved what a snapshot
 * says was approved (whoever can write the store could have moved a call
 * there): those calls wait for a decision again, in transcript order.
 * Rejections stand; a forged one only stops a call.
 */
function undecided(approval: PausedBatch, messages: Message[]): PausedBatch {
  if (approval.approved.length === 0) return approval;
  const last = messages.at(-1);
  const order = new Map((last?.role === 'assistant' ? toolCallsOf(last) : []).map((call, index) => [call.id, index]));
  const pending = [...approval.pending, ...approval.approved].sort(
    (a, b) => order.get(a.toolCallId)! - order.get(b.toolCallId)!,
  );
  return { pending, approved: [], rejected: approval.rejected };
}

function checkMessages(value: unknown, field: string): Message[] {
  if (!Array.isArray(value))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot(`${field} must be an array of messages`),
    );
  for (const message of value) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'toolResult')
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_SNAPSHOT',
        AgentErrors.badSnapshot(`${field} holds something that is not a message`),
      );
  }
  return value as Message[];
}

function checkApproval(value: unknown, messages: Message[], checkCall: PendingCallCheck | undefined): PausedBatch {
  const paused = value as Partial<PausedBatch> | null;
  if (
    typeof paused !== 'object' ||
    paused === null ||
    !Array.isArray(paused.pending) ||
    !Array.isArray(paused.approved) ||
    typeof paused.rejected !== 'object' ||
    paused.rejected === null
  ) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot('approval must be { pending, approved, rejected }'),
    );
  }
  const last = messages.at(-1);
  const calls = new Map((last?.role === 'assistant' ? toolCallsOf(last) : []).map((call) => [call.id, call]));
  const entries = [
    ...paused.pending.map((entry) => ['pending', entry] as const),
    ...paused.approved.map((entry) => ['approved', entry] as const),
  ];
  const ids = [
    ...entries.map(([, entry]) => (entry as PendingApproval | null)?.toolCallId),
    ...Object.keys(paused.rejected),
  ];
  if (paused.pending.length === 0 || ids.some((id) => typeof id !== 'string' || !calls.has(id))) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot('approval names calls that are not the tool calls of the last assistant message'),
    );
  }
  if (new Set(ids).size !== ids.length)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_SNAPSHOT',
      AgentErrors.badSnapshot('approval names a call twice (pending, approved and rejected are disjoint)'),
    );
  for (const [decision, entry] of entries) {
    const call = calls.get(entry.toolCallId)!;
    const problem =
      entryProblem(entry) ??
      (entry.toolName !== call.name
        ? AgentErrors.pendingToolMismatch(entry.toolName, call.name)
        : checkCall?.(call, entry, decision));
    if (problem !== undefined)
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_SNAPSHOT',
        AgentErrors.badSnapshot(AgentErrors.pendingCallMismatch(entry.toolCallId, problem)),
      );
  }
  return paused as PausedBatch;
}

function entryProblem(entry: PendingApproval): string | undefined {
  if (typeof entry.toolName !== 'string') return 'it has no tool name';
  if (typeof entry.args !== 'object' || entry.args === null || Array.isArray(entry.args))
    return 'it has no arguments object';
  return undefined;
}

function checkIntegrity(snapshot: AgentSnapshot, secret: SnapshotSecret): void {
  const given = snapshot.integrity;
  if (typeof given !== 'string')
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_SNAPSHOT', AgentErrors.snapshotUnsigned());
  const expected = integrityOf(snapshot, secret);
  const matches = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  if (!matches) throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_SNAPSHOT', AgentErrors.snapshotTampered());
}

/** The HMAC of everything but the check itself, over a canonical JSON (keys sorted), so a store that reorders keys still verifies. */
function integrityOf(snapshot: AgentSnapshot, secret: SnapshotSecret): string {
  const { integrity: _ignored, ...signed } = snapshot;
  return `hmac-sha256:${createHmac('sha256', secret).update(canonicalJson(signed)).digest('hex')}`;
}
