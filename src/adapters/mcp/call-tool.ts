import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolRequest, CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { toCallToolResult } from './content.ts';
import { progressListener } from './progress.ts';
import type { McpExecutor } from './server.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Call ids only need to be unique among the calls one executor runs at a time; one counter serves every server. */
let sequence = 0;

/**
 * `tools/call`: one request is one batch, so calls arriving concurrently
 * run concurrently (bounded by the pool) and every call gets validation,
 * coercion, hooks, limits and isolation. The request's signal (fired by
 * `notifications/cancelled` or a closed connection) aborts the call: the
 * tool's `ctx.signal` fires, and a tool that ignores it is killed after
 * its grace period.
 */
export async function callTool(executor: McpExecutor, request: CallToolRequest, extra: Extra): Promise<CallToolResult> {
  const { name, arguments: args = {} } = request.params;
  const token = request.params._meta?.progressToken;
  const onEvent = token !== undefined ? progressListener(token, (notification) => extra.sendNotification(notification)) : undefined;
  const batch = await executor.executeBatch([{ id: `mcp_${++sequence}`, name, arguments: args }], {
    signal: extra.signal,
    ...(onEvent ? { onEvent } : {}),
  });
  return toCallToolResult(batch.results[0]!);
}
