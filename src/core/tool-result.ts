import type { ToolResult } from './tool.ts';

/** Says what is wrong with a value returned as a tool result, or `undefined` when it is fine. */
export function problemWithResult(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected an object { content: [...] }, got ${describe(value)}`;
  const { content, terminate } = value as Record<string, unknown>;
  if (!Array.isArray(content)) return `"content" must be an array of text or image parts, got ${describe(content)}`;
  for (let i = 0; i < content.length; i++) {
    const problem = problemWithPart(content[i]);
    if (problem) return `content[${i}] ${problem}`;
  }
  if (terminate !== undefined && typeof terminate !== 'boolean') return `"terminate" must be a boolean, got ${describe(terminate)}`;
  return undefined;
}

function problemWithPart(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null) return `must be an object, got ${describe(part)}`;
  const { type, text, data, mimeType } = part as Record<string, unknown>;
  if (type === 'text') return typeof text === 'string' ? undefined : 'is a text part without a string "text"';
  if (type === 'image') {
    return typeof data === 'string' && typeof mimeType === 'string'
      ? undefined
      : 'is an image part without string "data" (base64) and "mimeType"';
  }
  return `has unknown type ${describe(type)}; use "text" or "image"`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
}

export function textResult(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}
