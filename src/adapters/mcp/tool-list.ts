import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpExecutor } from './server.ts';

/** `tools/list`: each definition with its JSON schema as `inputSchema` and its `label` as `title`. */
export function listTools(executor: McpExecutor): McpTool[] {
  return executor.definitions.map((definition) => {
    const title = executor.labels.get(definition.name);
    return {
      name: definition.name,
      ...(title !== undefined ? { title } : {}),
      description: definition.description,
      // MCP requires an object schema; a tool's parameters are one (its arguments are an object).
      inputSchema: { ...(definition.parameters as Record<string, unknown>), type: 'object' },
    };
  });
}
