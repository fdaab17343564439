import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ProgressNotification,
  type ProgressToken,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalOptions, BatchResult, Listener, ToolCall, ToolEvent } from '../../index.ts';
import { ToolErrors } from '../../core/errors.ts';
import { askPerson, canAskPerson, cannotAsk, DEFAULT_APPROVAL_TIMEOUT_MS } from './approval.ts';
import { toCallToolResult } from './content.ts';
import { clientAnswers } from './elicit.ts';
import { progressListener } from './progress.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Call ids only need to be unique among the calls one executor runs at a time; one counter serves every server. */
let sequence = 0;

/** A tools/call's parameters, as both SDKs' servers (1.x for 2025 clients, v2 for 2026-07-28 ones) hand them over. */
interface CallParams {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown> & { progressToken?: ProgressToken };
}

/**
 * What every server of toolpool does first with a tools/call, whichever
 * revision it speaks: a name the executor does not list is the protocol
 * error -32602 (`protocolError`, the SDK's own error class); a bad ledger
 * key is refused as an error result; otherwise the executor's call, its
 * ledger key, and a listener that sends the call's updates as progress
 * when the client gave a progress token.
 */
export function prepareCall(
  executor: McpExecutor,
  params: CallParams,
  notify: (notification: ProgressNotification) => Promise<void>,
  protocolError: (message: string) => Error,
):
  | { call: ToolCall; key: { runId: string; callId: string } | undefined; onEvent: Listener<ToolEvent> | undefined }
  | { refused: CallToolResult } {
  const { name, arguments: args = {}, _meta: meta } = params;
  if (!executor.definitions.some((definition) => definition.name === name)) {
    throw protocolError(
      ToolErrors.unknownTool(
        name,
        executor.definitions.map((definition) => definition.name),
      ),
    );
  }
  const key = callKey(meta);
  if (typeof key === 'string') return { refused: { content: [{ type: 'text', text: key }], isError: true } };
  const token = meta?.progressToken;
  return {
    call: { id: key?.callId ?? `mcp_${++sequence}`, name, arguments: args },
    key,
    onEvent: token !== undefined ? progressListener(token, notify) : undefined,
  };
}

/**
 * `tools/call`: one request is one batch, so calls arriving concurrently
 * run concurrently (bounded by the pool) and every call gets validation,
 * coercion, hooks, limits and isolation. The request's signal (fired by
 * `notifications/cancelled` or a closed connection) aborts the call: the
 * tool's `ctx.signal` fires, and a tool that ignores it is killed after
 * its grace period. A call that needs a person's approval asks the client
 * first (see approval.ts). A name the server does not list is a protocol
 * error (-32602, invalid params), as the specification names it for every
 * revision toolpool speaks, not a tool result.
 */
export async function callTool(
  executor: McpExecutor,
  server: Server,
  request: CallToolRequest,
  extra: Extra,
  options: McpServerOptions,
): Promise<CallToolResult> {
  const prepared = prepareCall(
    executor,
    request.params,
    (notification) => extra.sendNotification(notification),
    (message) => new McpError(ErrorCode.InvalidParams, message),
  );
  if ('refused' in prepared) return prepared.refused;
  const { call, key, onEvent } = prepared;
  const { name } = call;
  const onElicit = clientAnswers(server, extra.requestId, options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS);
  const run = (approvals?: ApprovalOptions) =>
    executor.executeBatch([call], {
      signal: extra.signal,
      onElicit,
      ...(onEvent ? { onEvent } : {}),
      ...(approvals ? { approvals } : {}),
      ...(key ? { runId: key.runId } : {}),
    });
  const metadata = executor.metadata.get(name);
  const structured = metadata?.outputSchema !== undefined;
  const finish = (batch: BatchResult) => toCallToolResult(batch.results[0]!, structured);
  if ((metadata?.needsApproval ?? 'never') === 'never') return finish(await run());
  if (!canAskPerson(server)) return finish(await run(cannotAsk(server)));
  // Nothing runs while a person is asked: the first batch only says whether the call waits for one.
  const first = await run({ undecided: 'pause' });
  if (!first.pending) return finish(first);
  const label = executor.labels.get(name);
  const decision = await askPerson(server, first.pending[0]!, {
    requestId: extra.requestId,
    signal: extra.signal,
    timeoutMs: options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS,
    ...(label !== undefined ? { label } : {}),
  });
  return finish(await run(decision));
}

/** The `_meta` keys a client gives to have a call recorded in the executor's ledger (see docs/ledger.md). */
export const RUN_ID_META = 'toolpool/runId';
export const CALL_ID_META = 'toolpool/callId';

/**
 * A `tools/call` is a new call unless the client says otherwise: with
 * `_meta: { "toolpool/runId": ..., "toolpool/callId": ... }` it is keyed
 * `(runId, callId)` in the executor's ledger, so a client's retry with the
 * same pair is answered from the ledger instead of running again. Without
 * them the call is not recorded. Returns the key, nothing, or what is wrong.
 */
export function callKey(
  meta: Record<string, unknown> | undefined,
): { runId: string; callId: string } | string | undefined {
  const runId = meta?.[RUN_ID_META];
  const callId = meta?.[CALL_ID_META];
  if (runId === undefined && callId === undefined) return undefined;
  const fits = (value: unknown): value is string =>
    typeof value === 'string' && value.length > 0 && value.length <= 512;
  if (!fits(runId) || !fits(callId))
    return `Not run: _meta "${RUN_ID_META}" and "${CALL_ID_META}" go together, each a non-empty string of at most 512 characters.`;
  return { runId, callId };
}
