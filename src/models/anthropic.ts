/// <reference types="node" preserve="true" />
/**
 * A `Model` backed by the Anthropic Messages API. Its own entry point, so
 * `@anthropic-ai/sdk` stays an optional peer dependency.
 */
import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import type { AssistantMessage, Message, StopReason, Usage } from '../core/messages.ts';
import type { Model, ModelRequest, ModelStreamEvent } from '../core/model.ts';
import type { Content, ToolResultMessage, ToolSchema } from '../core/tool.ts';
import { modelParts, type ModelTakes } from './shared.ts';
import {
  argumentsAsObject,
  assistantMessage,
  describeConnectionError,
  describeHttpError,
  describeStreamError,
  errorText,
  finishToolCall,
  resolveApiKey,
  stopReasonFor,
  withoutV1Suffix,
  type PendingToolCall,
  streamModelTurn,
  type ProviderOptions,
} from './shared.ts';

type MessageParam = Anthropic.MessageParam;
type BlockParam = Anthropic.ContentBlockParam;
type StreamEvent = Anthropic.RawMessageStreamEvent;
type ImageMediaType = Anthropic.Base64ImageSource['media_type'];

/** The API requires `max_tokens` and the SDK does not fill it in. */
const DEFAULT_MAX_TOKENS = 4096;

/** `apiKey` defaults to `ANTHROPIC_API_KEY`; `maxTokens` to 4096. */
export interface AnthropicModelOptions extends ProviderOptions {
  /**
   * @deprecated Never sent. The API version this SDK speaks (`anthropic-version:
   * 2026-10-21`) answers 400 to `temperature` on every model, and the SDK's types
   * dropped it; kept so options shared with `openaiModel` still type-check.
   */
  temperature?: number;
  /** A ready client; `apiKey`, `baseURL` and `maxRetries` are then ignored. */
  client?: Anthropic;
}

export function anthropicModel(options: AnthropicModelOptions): Model {
  const client = options.client ?? createClient(options);
  const name = `anthropic:${options.model}`;
  return {
    name,
    stream(request) {
      return streamTurn(client, options, name, request);
    },
  };
}

function createClient(options: AnthropicModelOptions): Anthropic {
  // The SDK appends `/v1/messages` itself.
  const baseURL = options.baseURL === undefined ? undefined : withoutV1Suffix(options.baseURL);
  const apiKey = resolveApiKey({ apiKey: options.apiKey, envVar: 'ANTHROPIC_API_KEY', baseURL });
  return new Anthropic({ apiKey, baseURL, maxRetries: options.maxRetries ?? 2 });
}

function streamTurn(
  client: Anthropic,
  options: AnthropicModelOptions,
  modelName: string,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent> {
  return streamModelTurn({
    modelName,
    request,
    turn: new TurnState(),
    open: () => client.messages.create(requestBody(options, request), { signal: request.signal }),
    describeFailure: (error, responded) => describeFailure(error, responded, client.baseURL),
  });
}

function requestBody(options: AnthropicModelOptions, request: ModelRequest): Anthropic.MessageCreateParamsStreaming {
  const body: Anthropic.MessageCreateParamsStreaming = {
    model: options.model,
    max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    messages: toMessageParams(request.messages),
    stream: true,
  };
  if (request.systemPrompt) body.system = request.systemPrompt;
  if (request.tools.length > 0) body.tools = request.tools.map(toTool);
  return body;
}

function toTool(tool: ToolSchema): Anthropic.Tool {
  // The API only takes object schemas; a TypeBox object schema already says so.
  return { name: tool.name, description: tool.description, input_schema: { ...tool.parameters, type: 'object' } };
}

// ---------------------------------------------------------------- messages

/**
 * Tool results go back as `tool_result` blocks of a user message. Roles must
 * alternate, so a run of tool results, and a user message right after it,
 * share one user message, with the `tool_result` blocks first.
 */
function toMessageParams(messages: Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  let openToolResults: BlockParam[] | undefined;
  for (const message of messages) {
    if (message.role === 'toolResult') {
      if (!openToolResults) {
        openToolResults = [];
        out.push({ role: 'user', content: openToolResults });
      }
      openToolResults.push(toToolResultBlock(message));
    } else if (message.role === 'user' && openToolResults) {
      openToolResults.push(...toBlocks(message.content));
      openToolResults = undefined;
    } else if (message.role === 'user') {
      out.push({
        role: 'user',
        content: typeof message.content === 'string' ? message.content : toBlocks(message.content),
      });
    } else {
      openToolResults = undefined;
      out.push({ role: 'assistant', content: toAssistantBlocks(message) });
    }
  }
  return out;
}

/**
 * What the Messages API takes: text, JPEG, PNG, GIF and WebP images, PDFs
 * (document blocks); no audio. Anything else becomes a line of text.
 */
const TAKES: ModelTakes = {
  images: (mimeType) => IMAGE_TYPES.has(mimeType),
  audio: () => false,
  pdf: true,
};
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type ContentBlock = Anthropic.TextBlockParam | Anthropic.ImageBlockParam | Anthropic.DocumentBlockParam;

/** The API rejects empty text blocks, so they are left out. */
function toBlocks(content: string | Content[]): ContentBlock[] {
  const parts: Content[] = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  return modelParts(parts, 'Anthropic Messages', TAKES).flatMap((part): ContentBlock[] => {
    switch (part.type) {
      case 'text':
        return part.text ? [{ type: 'text' as const, text: part.text }] : [];
      case 'image':
        return [
          {
            type: 'image' as const,
            source: { type: 'base64' as const, media_type: part.mimeType as ImageMediaType, data: part.data },
          },
        ];
      case 'pdf':
        return [
          {
            type: 'document' as const,
            title: part.name,
            source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: part.data },
          },
        ];
      case 'audio':
        // TAKES says no audio, so modelParts made it text already.
        return [];
    }
  });
}

function toToolResultBlock(message: ToolResultMessage): Anthropic.ToolResultBlockParam {
  const block: Anthropic.ToolResultBlockParam = {
    type: 'tool_result',
    tool_use_id: message.toolCallId,
    is_error: message.isError,
  };
  const content = toBlocks(message.content);
  if (content.length > 0) block.content = content;
  return block;
}

function toAssistantBlocks(message: AssistantMessage): BlockParam[] {
  return message.content.flatMap((part): BlockParam[] => {
    if (part.type === 'text') return part.text ? [{ type: 'text', text: part.text }] : [];
    return [{ type: 'tool_use', id: part.id, name: part.name, input: argumentsAsObject(part.arguments) }];
  });
}

// ---------------------------------------------------------------- streaming

type Block = { kind: 'text'; text: string } | ({ kind: 'toolCall' } & PendingToolCall);

/** What has arrived of one turn so far, by content block index. */
class TurnState {
  private readonly blocks = new Map<number, Block>();
  private apiStopReason: Anthropic.StopReason | null = null;
  private stopped = false;
  private usage: Usage | undefined;

  *apply(event: StreamEvent): Generator<ModelStreamEvent> {
    switch (event.type) {
      case 'message_start':
        this.usage = {
          inputTokens: inputTokensOf(event.message.usage),
          outputTokens: event.message.usage.output_tokens,
        };
        return;
      case 'content_block_start':
        yield* this.startBlock(event);
        return;
      case 'content_block_delta':
        yield* this.applyDelta(event);
        return;
      case 'message_delta':
        this.apiStopReason = event.delta.stop_reason ?? this.apiStopReason;
        // Output tokens are cumulative; input tokens are often left out here (absent, not just null).
        this.usage = {
          inputTokens:
            typeof event.usage.input_tokens === 'number' ? inputTokensOf(event.usage) : (this.usage?.inputTokens ?? 0),
          outputTokens: event.usage.output_tokens,
        };
        return;
      case 'message_stop':
        this.stopped = true;
        return;
      case 'content_block_stop':
        // Tool arguments are parsed once, in `message`, from the joined fragments.
        return;
    }
  }

  private *startBlock(event: Anthropic.RawContentBlockStartEvent): Generator<ModelStreamEvent> {
    const block = event.content_block;
    if (block.type === 'tool_use') {
      this.blocks.set(event.index, { kind: 'toolCall', id: block.id, name: block.name, json: '' });
      yield { type: 'toolcall_start', index: event.index, id: block.id, name: block.name };
    } else if (block.type === 'text') {
      this.blocks.set(event.index, { kind: 'text', text: block.text });
      if (block.text) yield { type: 'text_delta', delta: block.text };
    }
    // Thinking and server-tool blocks have no place in toolpool's messages.
  }

  private *applyDelta(event: Anthropic.RawContentBlockDeltaEvent): Generator<ModelStreamEvent> {
    const block = this.blocks.get(event.index);
    const delta = event.delta;
    if (delta.type === 'text_delta' && block?.kind === 'text') {
      block.text += delta.text;
      yield { type: 'text_delta', delta: delta.text };
    } else if (delta.type === 'input_json_delta' && block?.kind === 'toolCall') {
      block.json += delta.partial_json;
      if (delta.partial_json) yield { type: 'toolcall_delta', index: event.index, delta: delta.partial_json };
    }
  }

  finish(model: string, aborted: boolean): AssistantMessage {
    if (aborted) return this.message(model, 'aborted');
    if (!this.stopped) return this.fail(model, 'The stream was cut off: stream ended before message_stop');
    if (this.apiStopReason === 'refusal') return this.fail(model, 'The model refused to answer (stop_reason: refusal)');
    return this.message(model, toStopReason(this.apiStopReason, this.hasToolCalls()));
  }

  fail(model: string, errorMessage: string): AssistantMessage {
    return this.message(model, 'error', errorMessage);
  }

  private hasToolCalls(): boolean {
    return [...this.blocks.values()].some((block) => block.kind === 'toolCall');
  }

  private message(model: string, stopReason: StopReason, errorMessage?: string): AssistantMessage {
    const indexes = [...this.blocks.keys()].sort((a, b) => a - b);
    const content = indexes.flatMap((index): AssistantMessage['content'] => {
      const block = this.blocks.get(index)!;
      if (block.kind === 'toolCall') return [finishToolCall(block)];
      return block.text ? [{ type: 'text', text: block.text }] : [];
    });
    return assistantMessage({ content, stopReason, errorMessage, usage: this.usage, model });
  }
}

/** Cached prompt tokens are input too, but the API counts them apart from `input_tokens`. */
function inputTokensOf(usage: {
  input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
}): number {
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

function toStopReason(reason: Anthropic.StopReason | null, hasToolCalls: boolean): StopReason {
  const cutOff = reason === 'max_tokens' || reason === 'model_context_window_exceeded';
  return stopReasonFor(cutOff ? 'length' : 'stop', hasToolCalls);
}

// ---------------------------------------------------------------- errors

function describeFailure(error: unknown, responded: boolean, baseURL: string): string {
  if (error instanceof APIConnectionError) return describeConnectionError(error.cause ?? error, baseURL);
  if (error instanceof APIError) {
    if (error.status !== undefined) return describeHttpError(serverName(baseURL), error.status, serverMessage(error));
    // An `error` event inside the stream, e.g. `overloaded_error`.
    const type = error.type ? ` (${error.type})` : '';
    return `${serverName(baseURL)} reported an error in the stream${type}: ${serverMessage(error)}`;
  }
  if (responded) return describeStreamError(error);
  return `The request to ${baseURL} failed: ${errorText(error)}`;
}

function serverName(baseURL: string): string {
  try {
    if (new URL(baseURL).hostname === 'api.anthropic.com') return 'Anthropic';
  } catch {
    // Not a URL: name it as given.
  }
  return `The server at ${baseURL}`;
}

function serverMessage(error: APIError): string {
  // A body that is not JSON (a proxy's HTML page) ends up in the message after the status.
  return error.apiMessage ?? error.message.replace(/^\d{3} /, '');
}
