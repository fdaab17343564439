import type { AssistantMessage, StopReason, ToolCallContent } from '../core/messages.ts';
import { AgentErrors } from '../core/errors.ts';
import { parseToolArguments } from '../models/shared.ts';
import type { TextContent } from '../core/tool.ts';
import type { ModelDelta } from './events.ts';

interface StreamingToolCall {
  part: ToolCallContent;
  json: string;
}

/**
 * The assistant message as far as the model has streamed it. Parts stay in
 * the order they arrived; tool-call arguments are the JSON text so far.
 */
export class PartialAssistantMessage {
  readonly #content: Array<TextContent | ToolCallContent> = [];
  readonly #toolCalls = new Map<number, StreamingToolCall>();

  constructor(private readonly model: string) {}

  apply(delta: ModelDelta): void {
    switch (delta.type) {
      case 'text_delta': {
        const last = this.#content.at(-1);
        if (last?.type === 'text') last.text += delta.delta;
        else this.#content.push({ type: 'text', text: delta.delta });
        return;
      }
      case 'toolcall_start': {
        const part: ToolCallContent = { type: 'toolCall', id: delta.id, name: delta.name, arguments: '' };
        this.#toolCalls.set(delta.index, { part, json: '' });
        this.#content.push(part);
        return;
      }
      case 'toolcall_delta': {
        const call = this.#toolCalls.get(delta.index);
        if (!call) return;
        call.json += delta.delta;
        call.part.arguments = call.json;
        return;
      }
    }
  }

  /** A copy listeners may keep; its `stopReason` is provisional. */
  snapshot(): AssistantMessage {
    const stopReason: StopReason = this.#toolCalls.size > 0 ? 'toolUse' : 'stop';
    return this.#message(stopReason, (part) => ({ ...part }));
  }

  /** The message as it stands, ended early (abort, a model that threw). Arguments are parsed where complete. */
  finish(stopReason: 'aborted' | 'error', errorMessage?: string): AssistantMessage {
    const message = this.#message(stopReason, (part) =>
      part.type === 'toolCall' ? { ...part, arguments: parseToolArguments(String(part.arguments)) } : { ...part },
    );
    if (errorMessage !== undefined) message.errorMessage = errorMessage;
    return withErrorMessage(message);
  }

  #message(
    stopReason: StopReason,
    copy: (part: TextContent | ToolCallContent) => TextContent | ToolCallContent,
  ): AssistantMessage {
    return {
      role: 'assistant',
      content: this.#content.map(copy),
      stopReason,
      model: this.model,
      timestamp: Date.now(),
    };
  }
}

/**
 * An assistant message that ended `aborted` or `error` says what happened
 * in words, also when the model adapter gave no text: UIs and logs show it.
 */
export function withErrorMessage(message: AssistantMessage): AssistantMessage {
  if (message.errorMessage !== undefined) return message;
  if (message.stopReason === 'aborted') return { ...message, errorMessage: AgentErrors.messageAborted() };
  if (message.stopReason === 'error') return { ...message, errorMessage: AgentErrors.modelTurnFailed() };
  return message;
}
