import type { ToolResultPart } from 'ai';
import type { Content } from '../../index.ts';

/** What a tool result is for the model (the type lives in a package `ai` depends on; reach it through `ai`). */
type ToolResultOutput = ToolResultPart['output'];

/**
 * What the model reads of a result: its content only (`details` is for logs
 * and UIs). Text alone goes as text, which every provider takes; with
 * images, as a content list of text and file parts.
 */
export function toModelOutput(content: readonly Content[]): ToolResultOutput {
  if (content.every((part) => part.type === 'text')) {
    return { type: 'text', value: content.map((part) => part.text).join('') };
  }
  return {
    type: 'content',
    value: content.map((part) =>
      part.type === 'text'
        ? { type: 'text' as const, text: part.text }
        : { type: 'file' as const, mediaType: part.mimeType, data: { type: 'data' as const, data: part.data } },
    ),
  };
}
