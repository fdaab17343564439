import type { Content, ToolResult } from './tool.ts';

/** Says what is wrong with a value returned as a tool result, or `undefined` when it is fine. */
export function problemWithResult(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null)
    return `expected an object { content: [...] }, got ${describe(value)}`;
  const { content, terminate } = value as Record<string, unknown>;
  if (!Array.isArray(content)) return `"content" must be an array of content parts, got ${describe(content)}`;
  for (let i = 0; i < content.length; i++) {
    const problem = problemWithPart(content[i]);
    if (problem) return `content[${i}] ${problem}`;
  }
  if (terminate !== undefined && typeof terminate !== 'boolean')
    return `"terminate" must be a boolean, got ${describe(terminate)}`;
  return undefined;
}

function problemWithPart(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null) return `must be an object, got ${describe(part)}`;
  const { type, text, data, mimeType } = part as Record<string, unknown>;
  switch (type) {
    case 'text':
      return typeof text === 'string' ? undefined : 'is a text part without a string "text"';
    case 'image':
    case 'audio':
      return typeof data === 'string' && typeof mimeType === 'string'
        ? undefined
        : `is an ${type} part without string "data" (base64) and "mimeType"`;
    case 'resource':
      return problemWithResource((part as Record<string, unknown>).resource);
    case 'resource_link':
      return problemWithLink(part as Record<string, unknown>);
    default:
      return `has unknown type ${describe(type)}; use "text", "image", "audio", "resource" or "resource_link"`;
  }
}

/** An embedded resource: `{ uri, mimeType?, text }` or `{ uri, mimeType?, blob }` (base64), never both. */
function problemWithResource(resource: unknown): string | undefined {
  if (typeof resource !== 'object' || resource === null || Array.isArray(resource)) {
    return `is a resource part whose "resource" must be an object { uri, text } or { uri, blob }, got ${describe(resource)}`;
  }
  const { uri, mimeType, text, blob } = resource as Record<string, unknown>;
  if (typeof uri !== 'string') return 'is a resource part whose resource has no string "uri"';
  if (mimeType !== undefined && typeof mimeType !== 'string')
    return 'is a resource part whose resource has a "mimeType" that is not a string';
  if (
    (typeof text === 'string') === (typeof blob === 'string') ||
    (text !== undefined && typeof text !== 'string') ||
    (blob !== undefined && typeof blob !== 'string')
  ) {
    return 'is a resource part whose resource must have either a string "text" or a string "blob" (base64), not both';
  }
  return undefined;
}

/** A resource link: `uri` and `name`, and optional `title`, `description`, `mimeType` (strings) and `size` (bytes). */
function problemWithLink(part: Record<string, unknown>): string | undefined {
  if (typeof part.uri !== 'string' || typeof part.name !== 'string')
    return 'is a resource_link part without string "uri" and "name"';
  for (const key of ['title', 'description', 'mimeType'] as const) {
    if (part[key] !== undefined && typeof part[key] !== 'string')
      return `is a resource_link part whose "${key}" is not a string`;
  }
  const { size } = part;
  if (size !== undefined && !(typeof size === 'number' && Number.isSafeInteger(size) && size >= 0)) {
    return 'is a resource_link part whose "size" is not a whole number of bytes';
  }
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value;
}

export function textResult(text: string): ToolResult {
  return { content: [{ type: 'text', text }] };
}

/**
 * A part a reader that takes only text can still read: text as it is, an
 * embedded text resource as its text under its URI, anything else as one
 * line saying what it was (its type, MIME type, size or link), never its bytes.
 */
export function partAsText(part: Content): string {
  switch (part.type) {
    case 'text':
      return part.text;
    case 'image':
    case 'audio':
      return `[${part.type} ${part.mimeType}, ${base64Bytes(part.data)} bytes]`;
    case 'resource': {
      const { resource } = part;
      if ('text' in resource && typeof resource.text === 'string')
        return `[resource ${resource.uri}]\n${resource.text}`;
      const blob = (resource as { blob: string }).blob;
      return `[resource ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}, ${base64Bytes(blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link ${part.uri}${part.name ? ` (${part.name})` : ''}${part.mimeType ? `, ${part.mimeType}` : ''}]`;
  }
}

/** The bytes base64 text stands for (padding counted off by hand: a regular expression could take quadratic time on hostile text). */
function base64Bytes(data: string): number {
  let end = data.length;
  while (end > 0 && data.charCodeAt(end - 1) === 61 /* = */) end--;
  return Math.floor((end * 3) / 4);
}
