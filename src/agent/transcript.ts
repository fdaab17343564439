import type { Content } from '../core/tool.ts';
import {
  toolCallsOf,
  type AssistantMessage,
  type Message,
  type ToolCallContent,
  type UserMessage,
} from '../core/messages.ts';
import type { ToolResultMessage } from '../core/tool.ts';
import { AgentErrors } from '../core/errors.ts';
import { ToolpoolTypeError } from '../core/error-codes.ts';

export function userMessage(content: string | Content[], method: string): UserMessage {
  if (typeof content !== 'string' && !Array.isArray(content))
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', AgentErrors.badPrompt(method));
  return { role: 'user', content: typeof content === 'string' ? content : [...content], timestamp: Date.now() };
}

/** The result of a call that did not run; the model reads `text`. */
export function notRunResult(call: ToolCallContent, text: string): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: 'text', text }],
    details: undefined,
    isError: true,
    timestamp: Date.now(),
  };
}

/** Tool calls in `messages` that have no result after them: a provider would reject such a transcript. */
export function unansweredToolCalls(messages: readonly Message[]): ToolCallContent[] {
  const answered = new Set<string>();
  for (const message of messages) if (message.role === 'toolResult') answered.add(message.toolCallId);
  return messages
    .filter((message): message is AssistantMessage => message.role === 'assistant')
    .flatMap(toolCallsOf)
    .filter((call) => !answered.has(call.id));
}

/**
 * The transcript as a model sees it: an assistant message that failed or was
 * aborted before it said anything is left out, because providers reject an
 * assistant message without content. Everything else goes as it is.
 */
export function messagesForModel(messages: readonly Message[]): Message[] {
  return messages.filter((message) => !(message.role === 'assistant' && endedEarly(message) && isEmpty(message)));
}

function endedEarly(message: AssistantMessage): boolean {
  return message.stopReason === 'error' || message.stopReason === 'aborted';
}

function isEmpty(message: AssistantMessage): boolean {
  return message.content.every((part) => part.type === 'text' && part.text.trim() === '');
}
