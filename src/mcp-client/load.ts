import { McpErrors, errorMessage } from '../core/errors.ts';
import type { ToolSource } from '../tools/tool-source.ts';
import type { McpStartOptions } from './index.ts';
import type { McpServerConfig } from '../core/mcp-config.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/**
 * The MCP servers' tools, for createExecutor. The client is imported only
 * here, when servers are configured (@modelcontextprotocol/client, a
 * dependency, is loaded only by hosts that use it); a broken install is
 * told as such.
 */
export async function loadMcpTools(
  servers: Readonly<Record<string, McpServerConfig>>,
  options: McpStartOptions,
): Promise<ToolSource> {
  let client: typeof import('./index.ts');
  try {
    client = await import('./index.ts');
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_MCP_SERVER', McpErrors.sdkMissing(errorMessage(error)));
  }
  return client.startMcpServers(servers, options);
}
