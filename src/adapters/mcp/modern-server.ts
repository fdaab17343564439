import { createHash } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import type { ApprovalOptions, BatchOptions, BatchResult, PendingApproval } from '../../index.ts';
import { AdapterErrors } from '../../core/errors.ts';
import { toolpoolVersion } from '../../core/version.ts';
import { prepareCall } from './call-tool.ts';
import { toCallToolResult } from './content.ts';
import { listTools } from './tool-list.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

/**
 * The executor's tools as a server of the MCP SDK v2
 * (`@modelcontextprotocol/server`), for clients that speak the 2026-07-28
 * revision: each request carries its own envelope (no session), progress
 * goes on the request's own stream, cancellation is the request's signal
 * (a closed HTTP request, or `notifications/cancelled` over stdio), and
 * `notifications/tools/list_changed` reaches the client's
 * `subscriptions/listen` stream. The serving entries of the SDK
 * (`createMcpHandler`, `serveStdio`) make one per request or connection;
 * 2025-era clients are served by `createMcpServer` (SDK 1.x) as before.
 *
 * tools/list and tools/call are what `createMcpServer` serves: the same
 * tools, the same results, an unknown tool the protocol error -32602. A
 * call that needs a person's approval runs nothing at first: it answers
 * `input_required` with the question (an elicitation in form mode showing
 * the tool and the validated arguments), and the client's retry with the
 * person's answer runs it (accept) or is an error result (decline,
 * dismiss). A client that did not declare elicitation gets an error result
 * saying so.
 */
export function createModernServer(executor: McpExecutor, options: McpServerOptions = {}): Server {
  const server = new Server(
    { name: options.name ?? 'toolpool', version: options.version ?? toolpoolVersion() },
    { capabilities: { tools: { listChanged: true } } },
  );
  // The same list createMcpServer serves (JSON Schema objects, which the SDK v2 types as JSON values).
  server.setRequestHandler('tools/list', () => ({ tools: listTools(executor) as Tool[] }));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const prepared = prepareCall(
      executor,
      { ...request.params, _meta: ctx.mcpReq._meta },
      (notification) => ctx.mcpReq.notify(notification),
      (message) => new ProtocolError(ProtocolErrorCode.InvalidParams, message),
    );
    if ('refused' in prepared) return prepared.refused;
    const { call, key, onEvent } = prepared;
    const { name } = call;
    const metadata = executor.metadata.get(name);
    const run = (approvals?: ApprovalOptions): Promise<BatchResult> =>
      executor.executeBatch([call], {
        signal: ctx.mcpReq.signal,
        ...(onEvent ? { onEvent } : {}),
        ...(approvals ? { approvals } : {}),
        ...(key ? { runId: key.runId } : {}),
      } satisfies BatchOptions);
    const finish = (batch: BatchResult) =>
      toCallToolResult(batch.results[0]!, metadata?.outputSchema !== undefined) as CallToolResult;
    if ((metadata?.needsApproval ?? 'never') === 'never') return finish(await run());
    const client = clientOf(ctx);
    if (!client.canAsk)
      return finish(await run({ undecided: { refuse: AdapterErrors.elicitationUnsupported(client.name) } }));
    // Nothing runs while a person is asked: this batch only says whether the call waits for one.
    const first = await run({ undecided: 'pause' });
    if (!first.pending) return finish(first);
    const round = await approvalRound(first.pending[0]!, ctx, executor.labels.get(name), client.name, run);
    return ('result' in round ? finish(round.result) : round.question) as CallToolResult;
  });
  return server;
}

/** The key of toolpool's question among a call's input requests. */
const APPROVAL = 'toolpool/approval';

/**
 * The call waits for a person. Without an answer yet: `input_required`
 * with the question, and the shown call's fingerprint as request state.
 * With one: the retry must be the call the person was shown (same tool,
 * same validated arguments; a client that changed them is refused), and
 * accept runs it, anything else is a rejection with the client's reason.
 * (The client answers for the person here as it does over 2025's
 * elicitation: this checks consistency, not who answered.)
 */
async function approvalRound(
  pending: PendingApproval,
  ctx: ServerContext,
  label: string | undefined,
  clientName: string | undefined,
  run: (approvals: ApprovalOptions) => Promise<BatchResult>,
): Promise<{ question: InputRequiredResult } | { result: BatchResult }> {
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([pending.toolName, pending.args]))
    .digest('base64url');
  const answer = ctx.mcpReq.inputResponses?.[APPROVAL] as { action?: unknown } | undefined;
  if (answer === undefined) {
    const question = inputRequired({
      inputRequests: {
        [APPROVAL]: inputRequired.elicit({
          mode: 'form',
          message: AdapterErrors.approvalQuestion(pending.toolName, label, pending.args),
          // Nothing to fill in: the question is the form, accept or decline its answer.
          requestedSchema: { type: 'object', properties: {} },
        }),
      },
      requestState: fingerprint,
    });
    return { question };
  }
  const decided = async (approvals: ApprovalOptions) => ({ result: await run(approvals) });
  if (ctx.mcpReq.requestState() !== fingerprint)
    return decided({ undecided: { refuse: AdapterErrors.approvalForOtherCall() } });
  if (answer.action === 'accept') return decided({ approved: [pending] });
  return decided({
    rejected: { [pending.toolCallId]: AdapterErrors.declinedInClient(clientName, answer.action === 'cancel') },
  });
}

/** The client as this request's envelope describes it: its name, and whether it can be asked (elicitation, form mode). */
function clientOf(ctx: ServerContext): { name: string | undefined; canAsk: boolean } {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const info = envelope[CLIENT_INFO_META_KEY] as { name?: unknown } | undefined;
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: { form?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  return {
    name: typeof info?.name === 'string' ? info.name : undefined,
    // An empty elicitation capability means form mode (the specification's default).
    canAsk:
      typeof elicitation === 'object' &&
      elicitation !== null &&
      (elicitation.form !== undefined || Object.keys(elicitation).length === 0),
  };
}
