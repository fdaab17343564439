import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Content, ToolResultMessage } from '../../index.ts';

type McpContent = CallToolResult['content'][number];

/** toolpool's content parts are MCP's content types, field for field (known fields only: nothing a tool added rides along). */
export function toMcpContent(content: readonly Content[]): McpContent[] {
  return content.map((part): McpContent => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image':
      case 'audio':
        return { type: part.type, data: part.data, mimeType: part.mimeType };
      case 'resource': {
        const { uri, mimeType } = part.resource;
        const body = 'text' in part.resource ? { text: part.resource.text } : { blob: part.resource.blob };
        return { type: 'resource', resource: { uri, ...(mimeType !== undefined ? { mimeType } : {}), ...body } };
      }
      case 'resource_link': {
        const { uri, name, title, description, mimeType, size } = part;
        return {
          type: 'resource_link',
          uri,
          name,
          ...(title !== undefined ? { title } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(mimeType !== undefined ? { mimeType } : {}),
          ...(size !== undefined ? { size } : {}),
        };
      }
    }
  });
}

/**
 * A finished call as an MCP tool result. An error result (validation, a
 * throw, a crash, a limit) stays a result with `isError: true` and
 * toolpool's text, so the model reads what went wrong. `details` is for
 * logs and UIs: it is sent only for a tool with an `outputSchema`, as
 * `structuredContent`, which the executor checked against that schema.
 */
export function toCallToolResult(message: ToolResultMessage, structured: boolean): CallToolResult {
  const result: CallToolResult = { content: toMcpContent(message.content), isError: message.isError };
  if (structured && !message.isError && isRecord(message.details)) result.structuredContent = message.details;
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
