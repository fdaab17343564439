import { AgentErrors } from '../errors.ts';
import { toolCallsOf, type Message, type UserMessage } from '../messages.ts';
import type { PausedBatch } from './approvals.ts';

/** Which snapshots this version of toolpool reads. Bump it when the shape changes. */
export const SNAPSHOT_FORMAT = 'toolpool.agent';
export const SNAPSHOT_VERSION = 1;

/**
 * An agent's state as plain JSON: store it anywhere and give it to
 * `new Agent({ model, executor, snapshot })`, in this process or another.
 */
export interface AgentSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: typeof SNAPSHOT_VERSION;
  messages: Message[];
  /** Queued `steer()` messages, oldest first. */
  steering: UserMessage[];
  /** Queued `followUp()` messages, oldest first. */
  followUps: UserMessage[];
  /** The batch that waits for a person: its undecided calls and the decisions given so far. */
  approval?: PausedBatch;
}

export type AgentState = Omit<AgentSnapshot, 'format' | 'version'>;

/** A deep copy through JSON: what comes out is detached from the agent and certain to serialize. */
export function takeSnapshot(state: AgentState): AgentSnapshot {
  const snapshot: AgentSnapshot = { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, ...state };
  if (!state.approval) delete snapshot.approval;
  return JSON.parse(JSON.stringify(snapshot)) as AgentSnapshot;
}

/**
 * Reads a snapshot back. The format and version are checked first, so a
 * snapshot from another version is refused instead of misread; then the
 * shape, so a paused batch points at real, unanswered tool calls.
 */
export function readSnapshot(value: unknown): AgentState {
  if (typeof value !== 'object' || value === null) throw new TypeError(AgentErrors.badSnapshot('it is not an object'));
  const snapshot = value as Partial<Record<keyof AgentSnapshot, unknown>>;
  if (snapshot.format !== SNAPSHOT_FORMAT) throw new TypeError(AgentErrors.badSnapshot(`its format is ${JSON.stringify(snapshot.format)}, not "${SNAPSHOT_FORMAT}"`));
  if (snapshot.version !== SNAPSHOT_VERSION) throw new TypeError(AgentErrors.snapshotVersion(snapshot.version, SNAPSHOT_VERSION));
  const messages = checkMessages(snapshot.messages, 'messages');
  const steering = checkMessages(snapshot.steering, 'steering') as UserMessage[];
  const followUps = checkMessages(snapshot.followUps, 'followUps') as UserMessage[];
  if (steering.concat(followUps).some((message) => message.role !== 'user')) throw new TypeError(AgentErrors.badSnapshot('steering and followUps must hold user messages'));
  const state: AgentState = { messages, steering, followUps };
  if (snapshot.approval !== undefined) state.approval = checkApproval(snapshot.approval, messages);
  return state;
}

function checkMessages(value: unknown, field: string): Message[] {
  if (!Array.isArray(value)) throw new TypeError(AgentErrors.badSnapshot(`${field} must be an array of messages`));
  for (const message of value) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'toolResult') throw new TypeError(AgentErrors.badSnapshot(`${field} holds something that is not a message`));
  }
  return value as Message[];
}

function checkApproval(value: unknown, messages: Message[]): PausedBatch {
  const paused = value as Partial<PausedBatch> | null;
  if (typeof paused !== 'object' || paused === null || !Array.isArray(paused.pending) || !Array.isArray(paused.approved) || typeof paused.rejected !== 'object' || paused.rejected === null) {
    throw new TypeError(AgentErrors.badSnapshot('approval must be { pending, approved, rejected }'));
  }
  const last = messages.at(-1);
  const callIds = new Set(last?.role === 'assistant' ? toolCallsOf(last).map((call) => call.id) : []);
  const ids = [...paused.pending.map((call) => call?.toolCallId), ...paused.approved, ...Object.keys(paused.rejected)];
  if (paused.pending.length === 0 || ids.some((id) => !callIds.has(id as string))) {
    throw new TypeError(AgentErrors.badSnapshot('approval names calls that are not the tool calls of the last assistant message'));
  }
  return paused as PausedBatch;
}
