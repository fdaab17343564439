import type { PendingApproval } from '../executor/approval.ts';
import { AgentErrors } from '../core/errors.ts';
import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';

/** What `agent.resume()` takes: ids a person approved, and ids they rejected with the reason. */
export interface ApprovalDecisions {
  approved?: readonly string[];
  rejected?: Readonly<Record<string, string>>;
}

/**
 * A batch waiting for a person: the calls still undecided, and the
 * decisions given so far (a resume may decide only some of them). An
 * approved call keeps the arguments the person was shown: it runs with
 * exactly those.
 */
export interface PausedBatch {
  pending: PendingApproval[];
  approved: PendingApproval[];
  rejected: Record<string, string>;
}

export function pausedBatch(
  pending: PendingApproval[],
  decided: Pick<PausedBatch, 'approved' | 'rejected'>,
): PausedBatch {
  return { pending, approved: [...decided.approved], rejected: { ...decided.rejected } };
}

/**
 * Adds a person's decisions to a paused batch. Throws, changing nothing,
 * for a malformed argument or an id that is not pending, so a typo never
 * runs or drops a call.
 */
export function decide(paused: PausedBatch, decisions: ApprovalDecisions): PausedBatch {
  const { approved, rejected } = checkDecisions(decisions);
  const pendingIds = new Set(paused.pending.map((call) => call.toolCallId));
  for (const id of [...approved, ...Object.keys(rejected)]) {
    if (!pendingIds.has(id))
      throw new ToolpoolError('TOOLPOOL_ERR_INVALID_DECISIONS', AgentErrors.notPending(id, [...pendingIds]));
  }
  const both = approved.find((id) => Object.hasOwn(rejected, id));
  if (both !== undefined)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_DECISIONS', AgentErrors.approvedAndRejected(both));
  const decided = new Set([...approved, ...Object.keys(rejected)]);
  return {
    pending: paused.pending.filter((call) => !decided.has(call.toolCallId)),
    approved: [...paused.approved, ...paused.pending.filter((call) => approved.includes(call.toolCallId))],
    rejected: { ...paused.rejected, ...rejected },
  };
}

function checkDecisions(decisions: ApprovalDecisions): { approved: string[]; rejected: Record<string, string> } {
  if (typeof decisions !== 'object' || decisions === null)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_DECISIONS',
      AgentErrors.badDecisions('pass { approved?: string[], rejected?: { id: reason } }'),
    );
  const approved = decisions.approved ?? [];
  if (!Array.isArray(approved) || approved.some((id) => typeof id !== 'string')) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_DECISIONS',
      AgentErrors.badDecisions('approved must be an array of tool-call ids'),
    );
  }
  const rejected = decisions.rejected ?? {};
  if (
    typeof rejected !== 'object' ||
    rejected === null ||
    Array.isArray(rejected) ||
    Object.values(rejected).some((reason) => typeof reason !== 'string')
  ) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_DECISIONS',
      AgentErrors.badDecisions('rejected must be an object { toolCallId: reason }'),
    );
  }
  return { approved: [...new Set(approved)], rejected: { ...rejected } };
}
