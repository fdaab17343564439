/// <reference types="node" preserve="true" />
/**
 * A `Model` backed by OpenAI Chat Completions (or any server that speaks
 * it: vLLM, llama.cpp, Ollama, LM Studio). Its own entry point, so `openai`
 * stays an optional peer dependency.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import type { AssistantMessage, Message, UserMessage, Usage } from '../core/messages.ts';
import type { Model, ModelRequest, ModelStreamEvent } from '../core/model.ts';
import type { Content, ToolResultMessage, ToolSchema } from '../core/tool.ts';
import type { ModelPart, ModelTakes } from './shared.ts';
import {
  argumentsAsJson,
  assistantMessage,
  describeConnectionError,
  describeHttpError,
  describeStreamError,
  errorText,
  finishToolCall,
  joinedText,
  modelParts,
  resolveApiKey,
  stopReasonFor,
  withV1Suffix,
  type PendingToolCall,
  streamModelTurn,
  type ProviderOptions,
} from './shared.ts';

type ChatMessage = OpenAI.ChatCompletionMessageParam;
type ContentPart = OpenAI.ChatCompletionContentPart;
type Chunk = OpenAI.ChatCompletionChunk;
type ToolCallDelta = OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall;

/** `apiKey` defaults to `OPENAI_API_KEY`. */
export interface OpenAIModelOptions extends ProviderOptions {
  /** A ready client; `apiKey`, `baseURL` and `maxRetries` are then ignored. */
  client?: OpenAI;
}

export function openaiModel(options: OpenAIModelOptions): Model {
  const client = options.client ?? createClient(options);
  return {
    name: `openai:${options.model}`,
    stream(request) {
      return streamTurn(client, options, `openai:${options.model}`, request);
    },
  };
}

function createClient(options: OpenAIModelOptions): OpenAI {
  const baseURL = options.baseURL === undefined ? undefined : withV1Suffix(options.baseURL);
  const apiKey = resolveApiKey({ apiKey: options.apiKey, envVar: 'OPENAI_API_KEY', baseURL });
  return new OpenAI({ apiKey, baseURL, maxRetries: options.maxRetries ?? 2 });
}

function streamTurn(
  client: OpenAI,
  options: OpenAIModelOptions,
  modelName: string,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent> {
  return streamModelTurn({
    modelName,
    request,
    turn: new TurnState(),
    open: () =>
      client.chat.completions.create(requestBody(client, options, request), {
        signal: request.signal,
      }),
    describeFailure: (error, responded) => describeFailure(error, responded, client),
  });
}

function requestBody(
  client: OpenAI,
  options: OpenAIModelOptions,
  request: ModelRequest,
): OpenAI.ChatCompletionCreateParamsStreaming {
  const body: OpenAI.ChatCompletionCreateParamsStreaming = {
    model: options.model,
    messages: toChatMessages(request.systemPrompt, request.messages),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) body.tools = request.tools.map(toChatTool);
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.maxTokens !== undefined) {
    // OpenAI's reasoning models reject `max_tokens`; compatible servers do not all know its successor.
    if (isOfficialApi(client)) body.max_completion_tokens = options.maxTokens;
    else body.max_tokens = options.maxTokens;
  }
  return body;
}

function isOfficialApi(client: OpenAI): boolean {
  try {
    return new URL(client.baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function toChatTool(tool: ToolSchema): OpenAI.ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

// ---------------------------------------------------------------- messages

function toChatMessages(systemPrompt: string | undefined, messages: Message[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (systemPrompt) out.push({ role: 'system', content: systemPrompt });
  // A `tool` message carries text only, so the images, audio and files of a run of tool results follow it in one user message.
  let pendingImages: ContentPart[] = [];
  const flushImages = (): void => {
    if (pendingImages.length > 0) out.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  for (const message of messages) {
    if (message.role === 'toolResult') {
      out.push(toToolMessage(message));
      pendingImages.push(...toolResultImages(message));
      continue;
    }
    flushImages();
    out.push(message.role === 'user' ? toUserMessage(message) : toAssistantMessage(message));
  }
  flushImages();
  return out;
}

function toUserMessage(message: UserMessage): ChatMessage {
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  // Plain text as a string: some compatible servers accept only that form.
  if (message.content.every((part) => part.type === 'text')) {
    return { role: 'user', content: joinedText(message.content) };
  }
  return { role: 'user', content: toContentParts(message.content) };
}

/**
 * What Chat Completions takes: text, images, audio as WAV or MP3 (`input_audio`,
 * for models that hear) and PDFs (`file`); anything else becomes a line of text.
 */
const TAKES: ModelTakes = {
  images: (mimeType) => mimeType.startsWith('image/'),
  audio: (mimeType) => audioFormat(mimeType) !== undefined,
  pdf: true,
};

function audioFormat(mimeType: string): 'wav' | 'mp3' | undefined {
  if (['audio/wav', 'audio/x-wav', 'audio/wave'].includes(mimeType)) return 'wav';
  if (['audio/mpeg', 'audio/mp3'].includes(mimeType)) return 'mp3';
  return undefined;
}

function toContentParts(content: Content[]): ContentPart[] {
  return modelParts(content, 'OpenAI Chat Completions', TAKES).map(toContentPart);
}

function toContentPart(part: ModelPart): ContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: { url: `data:${part.mimeType};base64,${part.data}` } };
    case 'audio':
      return { type: 'input_audio', input_audio: { data: part.data, format: audioFormat(part.mimeType)! } };
    case 'pdf':
      return { type: 'file', file: { filename: part.name, file_data: `data:application/pdf;base64,${part.data}` } };
  }
}

function toAssistantMessage(message: AssistantMessage): ChatMessage {
  const text = message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const toolCalls = message.content.flatMap((part) =>
    part.type === 'toolCall'
      ? [
          {
            id: part.id,
            type: 'function' as const,
            function: { name: part.name, arguments: argumentsAsJson(part.arguments) },
          },
        ]
      : [],
  );
  if (toolCalls.length === 0) return { role: 'assistant', content: text };
  return { role: 'assistant', content: text || null, tool_calls: toolCalls };
}

function toToolMessage(message: ToolResultMessage): ChatMessage {
  const parts = toContentParts(message.content);
  const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  const hasMedia = parts.some((part) => part.type !== 'text');
  const content = text || (hasMedia ? '(the result is in the next message)' : '(no output)');
  return { role: 'tool', tool_call_id: message.toolCallId, content };
}

/** The images, audio and files of a tool result, for the user message after the tool messages. */
function toolResultImages(message: ToolResultMessage): ContentPart[] {
  const media = toContentParts(message.content).filter((part) => part.type !== 'text');
  if (media.length === 0) return [];
  const label = `${media.every((part) => part.type === 'image_url') ? 'Image output' : 'Output'} of tool call ${message.toolCallId} (${message.toolName}):`;
  return [{ type: 'text', text: label }, ...media];
}

// ---------------------------------------------------------------- streaming

/** What has arrived of one turn so far. */
class TurnState {
  private text = '';
  private readonly calls = new Map<number, PendingToolCall>();
  private finishReason: OpenAI.ChatCompletionChunk.Choice['finish_reason'] = null;
  private usage: Usage | undefined;

  *apply(chunk: Chunk): Generator<ModelStreamEvent> {
    if (chunk.usage) {
      this.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    }
    // The usage chunk has no choices; some servers leave the field out entirely.
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const content = choice.delta?.content;
    if (content) {
      this.text += content;
      yield { type: 'text_delta', delta: content };
    }
    for (const part of choice.delta?.tool_calls ?? []) yield* this.applyToolCall(part);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  /** The first piece of a call carries its id and name; later ones only argument fragments. */
  private *applyToolCall(part: ToolCallDelta): Generator<ModelStreamEvent> {
    let call = this.calls.get(part.index);
    if (!call) {
      call = { id: part.id ?? '', name: part.function?.name ?? '', json: '' };
      this.calls.set(part.index, call);
      yield { type: 'toolcall_start', index: part.index, id: call.id, name: call.name };
    }
    const fragment = part.function?.arguments;
    if (fragment) {
      call.json += fragment;
      yield { type: 'toolcall_delta', index: part.index, delta: fragment };
    }
  }

  finish(model: string, aborted: boolean): AssistantMessage {
    if (aborted) return this.message(model, 'aborted');
    if (this.finishReason === null) {
      return this.fail(model, 'The stream was cut off: it ended without a finish_reason');
    }
    const finish = this.finishReason === 'length' ? 'length' : 'stop';
    return this.message(model, stopReasonFor(finish, this.calls.size > 0));
  }

  fail(model: string, errorMessage: string): AssistantMessage {
    return this.message(model, 'error', errorMessage);
  }

  private message(model: string, stopReason: AssistantMessage['stopReason'], errorMessage?: string): AssistantMessage {
    const content: AssistantMessage['content'] = [];
    if (this.text) content.push({ type: 'text', text: this.text });
    const indexes = [...this.calls.keys()].sort((a, b) => a - b);
    for (const index of indexes) content.push(finishToolCall(this.calls.get(index)!));
    return assistantMessage({ content, stopReason, errorMessage, usage: this.usage, model });
  }
}

// ---------------------------------------------------------------- errors

function describeFailure(error: unknown, responded: boolean, client: OpenAI): string {
  // Who answered: for a local server "OpenAI rejected the key" would send the user looking in the wrong place.
  const server = isOfficialApi(client) ? 'OpenAI' : `The server at ${client.baseURL}`;
  if (error instanceof APIConnectionError) return describeConnectionError(error.cause ?? error, client.baseURL);
  if (error instanceof APIError) {
    if (error.status !== undefined) return describeHttpError(server, error.status, serverMessage(error));
    return `${server} reported an error in the stream: ${serverMessage(error)}`;
  }
  if (responded) return describeStreamError(error);
  return `The request to ${client.baseURL} failed: ${errorText(error)}`;
}

function serverMessage(error: APIError): string {
  const body: unknown = error.error;
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string') {
    return body.message;
  }
  // A body that is not JSON (a proxy's HTML page) ends up in the message after the status.
  return error.message.replace(/^\d{3} /, '');
}
