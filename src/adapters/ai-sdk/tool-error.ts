import type { ToolResultMessage } from '../../index.ts';

/**
 * Thrown from a tool's `execute` when toolpool made an error result
 * (validation, a throw, a crash, a timeout, an abort). The AI SDK turns it
 * into a tool error whose text, the message, is toolpool's, so the model
 * reads "Tool timed out after 300 ms ..." or the fields that failed validation.
 */
export class ToolpoolToolError extends Error {
  override readonly name = 'ToolpoolToolError';

  constructor(readonly result: ToolResultMessage) {
    super(result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n'));
  }

  /** The SDK sends `String(error)` to the model: make that toolpool's text alone, without "ToolpoolToolError: ". */
  override toString(): string {
    return this.message;
  }
}
