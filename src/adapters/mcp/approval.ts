import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalOptions, PendingApproval } from '../../index.ts';
import { AdapterErrors, errorMessage } from '../../core/errors.ts';

/** Five minutes for a person to answer; a client that never answers must not hold the call forever. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** Whether the client can put a question to a person: MCP elicitation in form mode. */
export function canAskPerson(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation?.form !== undefined;
}

/** What the call's second batch is told when the client cannot ask. */
export function cannotAsk(server: Server): ApprovalOptions {
  return { undecided: { refuse: AdapterErrors.elicitationUnsupported(clientName(server)) } };
}

export interface AskOptions {
  /** The tools/call request the question belongs to (over HTTP it travels on that request's stream). */
  requestId: RequestId;
  signal: AbortSignal;
  timeoutMs: number;
  /** The tool's label, to show with its name. */
  label?: string;
}

/**
 * Asks the person at the client whether the call may run (MCP
 * elicitation), showing the tool and the validated arguments it would run
 * with, and turns the answer into approvals for the batch that runs it:
 * accept runs it; decline or dismiss is a rejection with that reason; no
 * answer in time, or a failed request, refuses it saying so.
 */
export async function askPerson(server: Server, call: PendingApproval, options: AskOptions): Promise<ApprovalOptions> {
  const client = clientName(server);
  let action: string;
  try {
    const answer = await server.elicitInput(
      {
        mode: 'form',
        message: AdapterErrors.approvalQuestion(call.toolName, options.label, call.args),
        // Nothing to fill in: the question is the form, accept or decline its answer.
        requestedSchema: { type: 'object', properties: {} },
      },
      { relatedRequestId: options.requestId, signal: options.signal, timeout: options.timeoutMs },
    );
    action = answer.action;
  } catch (error) {
    return { undecided: { refuse: AdapterErrors.elicitationFailed(client, errorMessage(error)) } };
  }
  // The call itself, with the arguments the person was shown: it runs with exactly those.
  if (action === 'accept') return { approved: [call] };
  return { rejected: { [call.toolCallId]: AdapterErrors.declinedInClient(client, action === 'cancel') } };
}

function clientName(server: Server): string | undefined {
  return server.getClientVersion()?.name;
}
