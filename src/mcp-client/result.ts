import type { CallToolResult } from '@modelcontextprotocol/client';
import { McpErrors, ToolErrors, boundText, MAX_TEXT } from '../core/errors.ts';
import type { RunOutcome } from '../core/runner.ts';
import type { Content, ToolResult } from '../core/tool.ts';
import type { ProgressUpdate } from './connection.ts';

type McpContent = CallToolResult['content'][number];

/**
 * An MCP tool result as a toolpool outcome: its content as toolpool's
 * parts of the same types, its `structuredContent` as `details`. `isError`
 * makes an error result with the server's own text. Its size is measured
 * against the call's `maxResultBytes`, as a worker's result is.
 */
export function callOutcome(server: string, result: CallToolResult, maxResultBytes: number): RunOutcome {
  const bytes = JSON.stringify(result).length;
  if (bytes > maxResultBytes)
    return { ok: false, error: ToolErrors.resultTooLarge('result', bytes, maxResultBytes), code: 'RESULT_TOO_LARGE' };
  const content = result.content.map(toContent);
  if (result.isError === true) {
    const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
    return { ok: false, error: text.trim() !== '' ? text : McpErrors.failedWithoutText(server), code: 'THREW' };
  }
  const toolResult: ToolResult = { content };
  if (isRecord(result.structuredContent)) toolResult.details = plainCopy(result.structuredContent);
  return { ok: true, result: toolResult };
}

/**
 * A `notifications/progress` as a `tool_update`: its message as text, and
 * `{ progress, total?, message? }` as details, the shape `toolpool serve`
 * turns back into MCP progress, so a served server's progress passes through.
 */
export function progressPartial(update: ProgressUpdate): ToolResult {
  const message = update.message !== undefined ? boundText(update.message, MAX_TEXT) : undefined;
  return {
    content: message !== undefined && message !== '' ? [{ type: 'text', text: message }] : [],
    details: {
      progress: update.progress,
      ...(update.total !== undefined ? { total: update.total } : {}),
      ...(message !== undefined ? { message } : {}),
    },
  };
}

/**
 * Each MCP content type as toolpool's part of the same type, with its known
 * fields only; a type toolpool does not know (a newer revision's) as a line
 * of text saying what it was. The whole result was measured already; the
 * parts are checked again like a tool's result where they are used.
 */
function toContent(part: McpContent): Content {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
    case 'audio':
      return { type: part.type, data: part.data, mimeType: part.mimeType };
    case 'resource_link': {
      const { uri, name, title, description, mimeType, size } = part;
      return {
        type: 'resource_link',
        uri,
        name,
        ...(typeof title === 'string' ? { title } : {}),
        ...(typeof description === 'string' ? { description } : {}),
        ...(typeof mimeType === 'string' ? { mimeType } : {}),
        ...(Number.isSafeInteger(size) && (size as number) >= 0 ? { size: size as number } : {}),
      };
    }
    case 'resource': {
      const { uri, mimeType } = part.resource;
      const kind = typeof mimeType === 'string' ? { mimeType } : {};
      return 'text' in part.resource && typeof part.resource.text === 'string'
        ? { type: 'resource', resource: { uri, ...kind, text: part.resource.text } }
        : {
            type: 'resource',
            resource: { uri, ...kind, blob: String((part.resource as { blob?: unknown }).blob ?? '') },
          };
    }
    default:
      return { type: 'text', text: `[${boundText(String((part as { type?: unknown }).type), 100)} content]` };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Details as plain JSON data: a `__proto__` key stays a key, never a prototype. */
function plainCopy(value: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
