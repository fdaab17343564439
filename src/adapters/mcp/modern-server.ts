import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import type { ApprovalOptions, BatchResult, ToolCall } from '../../index.ts';
import { AdapterErrors, ToolErrors } from '../../core/errors.ts';
import { toolpoolVersion } from '../../core/version.ts';
import { callKey } from './call-tool.ts';
import { toCallToolResult } from './content.ts';
import { progressListener } from './progress.ts';
import { listTools } from './tool-list.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

/** The revision this server speaks besides the 2025 ones (the SDK v2's own era handling). */
export const MODERN_REVISION = '2026-07-28';

let sequence = 0;

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
 * tool that needs a person's approval is refused with a message saying so:
 * the 2026-07-28 revision asks a person through an `input_required`
 * result, which toolpool does not send yet.
 */
export function createModernServer(executor: McpExecutor, options: McpServerOptions = {}): Server {
  const server = new Server(
    { name: options.name ?? 'toolpool', version: options.version ?? toolpoolVersion() },
    { capabilities: { tools: { listChanged: true } } },
  );
  // The same list createMcpServer serves (JSON Schema objects, which the SDK v2 types as JSON values).
  server.setRequestHandler('tools/list', () => ({ tools: listTools(executor) as Tool[] }));
  server.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    if (!executor.definitions.some((definition) => definition.name === name)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        ToolErrors.unknownTool(
          name,
          executor.definitions.map((definition) => definition.name),
        ),
      );
    }
    const key = callKey(ctx.mcpReq._meta);
    if (typeof key === 'string') return { content: [{ type: 'text', text: key }], isError: true };
    const call: ToolCall = { id: key?.callId ?? `mcp2_${++sequence}`, name, arguments: args };
    const token = ctx.mcpReq._meta?.progressToken;
    const onEvent =
      token !== undefined ? progressListener(token, (notification) => ctx.mcpReq.notify(notification)) : undefined;
    const metadata = executor.metadata.get(name);
    const needsAsking = (metadata?.needsApproval ?? 'never') !== 'never';
    const approvals: ApprovalOptions | undefined = needsAsking
      ? { undecided: { refuse: AdapterErrors.approvalUnsupportedModern(MODERN_REVISION) } }
      : undefined;
    const batch: BatchResult = await executor.executeBatch([call], {
      signal: ctx.mcpReq.signal,
      ...(onEvent ? { onEvent } : {}),
      ...(approvals ? { approvals } : {}),
      ...(key ? { runId: key.runId } : {}),
    });
    return toCallToolResult(batch.results[0]!, metadata?.outputSchema !== undefined) as CallToolResult;
  });
  return server;
}
