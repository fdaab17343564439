import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpExecutor } from './types.ts';

/**
 * `tools/list`: each definition with its JSON schema as `inputSchema`, its
 * `label` as `title`, and, when the tool has them, its `annotations` and
 * `outputSchema`.
 */
export function listTools(executor: McpExecutor): McpTool[] {
  return executor.definitions.map((definition) => {
    const title = executor.labels.get(definition.name);
    const { annotations, outputSchema } = executor.metadata.get(definition.name) ?? {};
    return {
      name: definition.name,
      ...(title !== undefined ? { title } : {}),
      description: definition.description,
      // MCP requires an object schema; a tool's parameters are one (its arguments are an object).
      inputSchema: { ...(definition.parameters as Record<string, unknown>), type: 'object' },
      // defineTool accepts only object output schemas, as MCP's structuredContent is an object.
      ...(outputSchema !== undefined ? { outputSchema: { ...outputSchema, type: 'object' as const } } : {}),
      ...(annotations !== undefined ? { annotations } : {}),
    };
  });
}
