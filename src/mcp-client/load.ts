import { McpErrors, errorMessage } from '../core/errors.ts';
import type { ToolSource } from '../tools/tool-source.ts';
import type { McpStartOptions } from './index.ts';
import type { McpServerConfig } from '../core/mcp-config.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/**
 * The MCP servers' tools, for createExecutor. The client is imported only
 * here, when servers are configured: it needs @modelcontextprotocol/sdk, an
 * optional peer dependency, and its absence is told as what to install.
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
