import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { toolpoolVersion } from '../../core/version.ts';
import { callTool } from './call-tool.ts';
import { listTools } from './tool-list.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

/**
 * An MCP server (of the official SDK) that serves the executor's tools.
 * Connect it to a transport (`await server.connect(new StdioServerTransport())`);
 * closing it does not close the executor.
 *
 * The tools are served through low-level handlers on `server.server`
 * because their schemas are JSON Schema already, while `registerTool` takes
 * Zod schemas. So do not add tools with `registerTool` to the returned server;
 * resources and prompts can be added as usual.
 */
export function createMcpServer(executor: McpExecutor, options: McpServerOptions = {}): McpServer {
  const server = new McpServer({ name: options.name ?? 'toolpool', version: options.version ?? toolpoolVersion() });
  // Declared on the low-level server, not in McpServer's options: those would install McpServer's own
  // tool handlers, and a later registerTool() should fail loudly rather than add a tool nobody serves.
  // listChanged: an upstream MCP server's tools/list_changed reaches the executor's tools, and from there these clients.
  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listTools(executor) }));
  server.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(executor, server.server, request, extra, options),
  );
  forwardToolChanges(executor, server);
  return server;
}

/** The executor's tools changed: tell the client, which lists them again. Stops when the server closes. */
function forwardToolChanges(executor: McpExecutor, server: McpServer): void {
  const stop = executor.on?.('tools_changed', () => {
    // Not connected (yet, or any more): nothing to tell.
    if (server.isConnected()) void server.server.sendToolListChanged().catch(() => undefined);
  });
  if (!stop) return;
  const onclose = server.server.onclose;
  server.server.onclose = () => {
    stop();
    onclose?.();
  };
}
