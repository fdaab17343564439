import type { AssistantMessage, Message } from './messages.ts';
import type { ToolSchema } from './tool.ts';

export interface ModelRequest {
  systemPrompt?: string;
  messages: Message[];
  tools: ToolSchema[];
  signal: AbortSignal;
}

/**
 * What a model streams during one turn. Deltas are for live display; the
 * final `done` event carries the complete assistant message and is always
 * the last event. A model reports failures as a `done` message with
 * `stopReason: 'error'` (or `'aborted'`) rather than by throwing.
 */
export type ModelStreamEvent =
  | { type: 'text_delta'; delta: string }
  | { type: 'toolcall_start'; index: number; id: string; name: string }
  | { type: 'toolcall_delta'; index: number; delta: string }
  | { type: 'done'; message: AssistantMessage };

export interface Model {
  /** A display name such as `scripted` or `openai:gpt-4o-mini`. */
  readonly name: string;
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}
