import type { ToolResultPart } from 'ai';
import type { Content } from '../../index.ts';
import { partAsText } from '../../core/tool-result.ts';

/** What a tool result is for the model (the type lives in a package `ai` depends on; reach it through `ai`). */
type ToolResultOutput = ToolResultPart['output'];
type OutputPart = Extract<ToolResultOutput, { type: 'content' }>['value'][number];

/**
 * What the model reads of a result: its content only (`details` is for logs
 * and UIs). Text alone goes as text, which every provider takes; otherwise
 * a content list: images, audio and embedded binary resources as file parts
 * with their media type (the provider decides what it can send), embedded
 * text resources and resource links as text saying what they are.
 */
export function toModelOutput(content: readonly Content[]): ToolResultOutput {
  if (content.every((part) => part.type === 'text')) {
    return { type: 'text', value: content.map((part) => part.text).join('') };
  }
  return { type: 'content', value: content.map(toOutputPart) };
}

function toOutputPart(part: Content): OutputPart {
  switch (part.type) {
    case 'image':
    case 'audio':
      return { type: 'file', mediaType: part.mimeType, data: { type: 'data', data: part.data } };
    case 'resource':
      if ('blob' in part.resource) {
        const { blob, mimeType, uri } = part.resource;
        return {
          type: 'file',
          mediaType: mimeType ?? 'application/octet-stream',
          filename: uri,
          data: { type: 'data', data: blob },
        };
      }
      return { type: 'text', text: partAsText(part) };
    default:
      return { type: 'text', text: partAsText(part) };
  }
}
