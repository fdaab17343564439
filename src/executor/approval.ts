import { isPlainObject, parseArguments } from '../tools/arguments.ts';
import { canonicalJson } from '../core/canonical-json.ts';
import { AgentErrors, ToolErrors, errorMessage } from '../core/errors.ts';
import type { RegisteredTool } from './registry.ts';
import type { ToolCall } from '../core/tool.ts';
import type { ToolErrorCode } from '../core/error-codes.ts';

/**
 * How an Agent asks its executor whether a snapshot's pending (or already
 * approved) call matches its tool call in the transcript: the tool exists
 * and can need approval, and the stored arguments are that call's. Not part
 * of the public Executor type; an executor without it gets only the
 * snapshot's own checks.
 */
export const CHECK_PENDING: unique symbol = Symbol('toolpool.checkPendingCall');

export interface PendingCheckable {
  [CHECK_PENDING](call: ToolCall, entry: PendingApproval, decision: 'pending' | 'approved'): string | undefined;
}

/** A call that waits for a person: what `agent_end { reason: 'approval' }` lists. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  /** The validated, coerced arguments the call would run with. */
  args: Record<string, unknown>;
}

/** What a person decided, and what happens to calls nobody decided on. */
export interface ApprovalOptions {
  /**
   * Calls a person approved: they run without asking `needsApproval`. Give
   * the pending call itself (`batch.pending` or `agent_end.pending`, with
   * its `args`) and it runs with exactly the arguments the person was shown
   * (validated again, `prepareArguments` not run again); a bare tool-call id
   * runs the call as the model sent it.
   */
  approved?: readonly (string | PendingApproval)[];
  /** Calls a person rejected, with the reason: each gets an error result carrying it. */
  rejected?: Readonly<Record<string, string>>;
  /**
   * A call that needs approval and has no decision: `'refuse'` (the
   * default) answers it with an error result; `'pause'` runs no call of
   * the batch and returns the undecided calls as `pending`;
   * `{ refuse: why }` refuses it with an error result that says why nobody
   * could decide (e.g. `'the MCP client cannot ask a person'`).
   */
  undecided?: 'refuse' | 'pause' | { refuse: string };
}

/**
 * The gate's answer for a batch: calls to wait for, error texts for calls
 * that must not run, and the arguments it settled for calls that may run
 * (prepared and validated once: a call runs with the arguments its approval
 * was decided on, never with a second `prepareArguments`'s).
 */
export interface ApprovalCheck {
  pending: PendingApproval[];
  refusals: Map<string, string>;
  /** The errorCode of each refusal, by call id. */
  refusalCodes: Map<string, ToolErrorCode>;
  settled: Map<string, Record<string, unknown>>;
}

/** Whether any call of the batch is for a tool with `needsApproval`; synchronous, so other batches pay no promise for the gate. */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export function hasGatedCalls(tools: ReadonlyMap<string, RegisteredTool>, calls: readonly ToolCall[]): boolean {
  return calls.some((call) => isGated(tools.get(call.name)));
}

/**
 * The approval gate, before any call of a batch starts: which calls need a
 * person's approval and have none. A call that would fail anyway (unknown
 * tool, bad arguments) is not put before a person: the batch reports its
 * own error.
 */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export async function checkApprovals(
  tools: ReadonlyMap<string, RegisteredTool>,
  calls: readonly ToolCall[],
  options: ApprovalOptions = {},
): Promise<ApprovalCheck> {
  const check: ApprovalCheck = { pending: [], refusals: new Map(), refusalCodes: new Map(), settled: new Map() };
  for (const call of calls) {
    const tool = tools.get(call.name);
    if (isGated(tool)) await checkCall(tool, call, options, check);
  }
  return check;
}

/** Only a known policy gates a call; a definition that reports none needs no approval. */
function isGated(tool: RegisteredTool | undefined): tool is RegisteredTool {
  const policy = tool?.info.needsApproval;
  return policy === 'always' || policy === 'function';
}

async function checkCall(
  tool: RegisteredTool,
  call: ToolCall,
  options: ApprovalOptions,
  check: ApprovalCheck,
): Promise<void> {
  const approval = approvalOf(options, call.id);
  if (typeof approval === 'object') return settleApproved(tool, call, approval, check);
  if (approval !== undefined) return;
  const rejected = options.rejected && Object.hasOwn(options.rejected, call.id) ? options.rejected[call.id] : undefined;
  if (rejected !== undefined) return refuse(check, call.id, 'REJECTED', ToolErrors.rejected(call.name, rejected));
  const args = await validArguments(tool, call);
  if (!args) return;
  const answer = await askTool(tool, args);
  if (typeof answer === 'string') return refuse(check, call.id, 'HOOK_FAILED', answer);
  if (!answer) return void check.settled.set(call.id, args);
  const undecided = options.undecided ?? 'refuse';
  if (undecided === 'pause') check.pending.push({ toolCallId: call.id, toolName: call.name, args });
  else
    refuse(
      check,
      call.id,
      'NOT_APPROVED',
      undecided === 'refuse'
        ? ToolErrors.notApproved(call.name)
        : ToolErrors.notApprovedBecause(call.name, undecided.refuse),
    );
}

/** The approval given for a call: the pending call a person saw, its bare id, or nothing. */
function approvalOf(options: ApprovalOptions, id: string): PendingApproval | string | undefined {
  return options.approved?.find((entry) => (typeof entry === 'string' ? entry : entry.toolCallId) === id);
}

/** An approved pending call runs with the arguments the person saw, checked again: the tool, and the schema. */
function settleApproved(tool: RegisteredTool, call: ToolCall, approval: PendingApproval, check: ApprovalCheck): void {
  if (approval.toolName !== call.name)
    return refuse(check, call.id, 'NOT_APPROVED', ToolErrors.approvedForAnotherTool(call.name, approval.toolName));
  const copy = parseArguments(approval.args);
  if (!copy.ok || !isPlainObject(copy.value))
    return refuse(check, call.id, 'NOT_APPROVED', ToolErrors.approvedWithoutArguments(call.name));
  const validation = tool.validate(copy.value, approval.args);
  if (!validation.ok) return refuse(check, call.id, 'INVALID_ARGUMENTS', validation.message);
  check.settled.set(call.id, validation.args);
}

function refuse(check: ApprovalCheck, id: string, code: ToolErrorCode, text: string): void {
  check.refusals.set(id, text);
  check.refusalCodes.set(id, code);
}

/** true or false, or the error text when the tool's `needsApproval` failed. */
async function askTool(tool: RegisteredTool, args: Record<string, unknown>): Promise<boolean | string> {
  if (tool.info.needsApproval === 'always') return true;
  let answer: unknown;
  try {
    answer = await tool.runner.needsApproval(args);
  } catch (error) {
    return ToolErrors.needsApprovalFailed(tool.info.name, errorMessage(error));
  }
  if (typeof answer === 'boolean') return answer;
  return ToolErrors.needsApprovalFailed(tool.info.name, `it returned ${String(answer)}, not true or false`);
}

/** The arguments the call would run with, or nothing when it would fail before running. */
async function validArguments(tool: RegisteredTool, call: ToolCall): Promise<Record<string, unknown> | undefined> {
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok || !isPlainObject(parsed.value)) return undefined;
  let raw: unknown = parsed.value;
  if (tool.info.hasPrepare) {
    try {
      raw = await tool.runner.prepare(parsed.value);
    } catch {
      return undefined;
    }
    if (!isPlainObject(raw)) return undefined;
  }
  const validation = tool.validate(raw as Record<string, unknown>, call.arguments);
  return validation.ok ? validation.args : undefined;
}

/**
 * Whether a stored pending call is the transcript's `call`: its tool can
 * need approval, and its arguments are what that call's arguments validate
 * to (for a tool with prepareArguments, whose output cannot be recomputed
 * without running tool code again, that they fit the schema: only a
 * snapshotSecret proves where they came from).
 */
/** @internal Not part of the public declarations (stripInternal): it names the registry's types. */
export function pendingCallProblem(
  tool: RegisteredTool | undefined,
  call: ToolCall,
  entry: PendingApproval,
): string | undefined {
  if (!tool) return AgentErrors.pendingToolUnknown(entry.toolName);
  if (!isGated(tool)) return AgentErrors.pendingNotGated(entry.toolName);
  const copy = parseArguments(entry.args);
  if (!copy.ok || !isPlainObject(copy.value))
    return AgentErrors.pendingArgumentsInvalid(copy.ok ? 'not an object' : copy.reason);
  const stored = tool.validate(copy.value, entry.args);
  if (!stored.ok) return AgentErrors.pendingArgumentsInvalid(stored.message);
  if (tool.info.hasPrepare) return undefined;
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok || !isPlainObject(parsed.value)) return AgentErrors.pendingArgumentsMismatch();
  const fromCall = tool.validate(parsed.value, call.arguments);
  return fromCall.ok && canonicalJson(fromCall.args) === canonicalJson(stored.args)
    ? undefined
    : AgentErrors.pendingArgumentsMismatch();
}
