import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Content, ToolResultMessage } from '../../index.ts';

type McpContent = CallToolResult['content'][number];

/** toolpool's text and image parts are MCP's text and image content, field for field. */
export function toMcpContent(content: readonly Content[]): McpContent[] {
  return content.map((part) =>
    part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image', data: part.data, mimeType: part.mimeType },
  );
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
