import type { Content, TextContent, ToolResultMessage } from './tool.ts';

/** A tool call as it stands in an assistant message. */
export interface ToolCallContent {
  type: 'toolCall';
  id: string;
  name: string;
  /** Parsed arguments; a string when the model's JSON could not be parsed. */
  arguments: Record<string, unknown> | string;
}

export type StopReason = 'stop' | 'toolUse' | 'length' | 'error' | 'aborted';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface UserMessage {
  role: 'user';
  content: string | Content[];
  timestamp: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: Array<TextContent | ToolCallContent>;
  stopReason: StopReason;
  /** What happened, in words, when `stopReason` is `error` or `aborted`. */
  errorMessage?: string;
  usage?: Usage;
  /** Which model produced it, e.g. `openai:gpt-4o-mini`. */
  model?: string;
  timestamp: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export function toolCallsOf(message: AssistantMessage): ToolCallContent[] {
  return message.content.filter((part): part is ToolCallContent => part.type === 'toolCall');
}

export function textOf(message: { content: string | ReadonlyArray<{ type: string; text?: string }> }): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
}
