/**
 * Helpers both model adapters use. This file must not import any provider
 * SDK: each adapter is its own entry point so its SDK stays an optional peer
 * dependency.
 */
import type { AssistantMessage, StopReason, ToolCallContent, Usage } from '../core/messages.ts';
import type { ModelRequest, ModelStreamEvent } from '../core/model.ts';
import type { AudioContent, Content, ImageContent, TextContent } from '../core/tool.ts';
import { partAsText } from '../core/tool-result.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/** Used as the API key for local servers, which ignore it but whose SDK clients insist on one. */
export const PLACEHOLDER_API_KEY = 'not-needed';

/** Options both providers take; each adds its SDK's `client`. */
export interface ProviderOptions {
  /** Model id as the server knows it, e.g. `gpt-4o-mini` or `claude-sonnet-4-5`. */
  model: string;
  /** Defaults to the provider's usual environment variable; not needed with a local `baseURL`. */
  apiKey?: string;
  /** A compatible server, with or without the trailing `/v1`. */
  baseURL?: string;
  maxTokens?: number;
  temperature?: number;
  /** How often the SDK retries 408/409/429/5xx and connection failures (default 2). */
  maxRetries?: number;
}

export function stripTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}

/** `http://host:8080`, `http://host:8080/` and `http://host:8080/v1` all become `http://host:8080/v1`. */
export function withV1Suffix(url: string): string {
  const base = stripTrailingSlashes(url);
  return base.endsWith('/v1') ? base : `${base}/v1`;
}

/** For SDKs that append `/v1/...` themselves: `http://host/v1/` becomes `http://host`. */
export function withoutV1Suffix(url: string): string {
  return stripTrailingSlashes(url).replace(/\/v1$/, '');
}

/**
 * The key to hand to an SDK client. A local server (a `baseURL` was given)
 * needs none, but the SDKs refuse to start without one, hence the placeholder.
 */
export function resolveApiKey(options: {
  apiKey: string | undefined;
  envVar: string;
  baseURL: string | undefined;
}): string {
  const key = options.apiKey || process.env[options.envVar];
  if (key) return key;
  if (options.baseURL) return PLACEHOLDER_API_KEY;
  throw new ToolpoolError(
    'TOOLPOOL_ERR_MODEL',
    `${options.envVar} is not set; pass apiKey or set the variable, or use a local server with baseURL`,
  );
}

/**
 * Parses the joined argument fragments of one tool call. No fragments means
 * no arguments; JSON that is not an object stays a string so the executor can
 * report it to the model as malformed.
 */
export function parseToolArguments(json: string): Record<string, unknown> | string {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    return isPlainObject(value) ? value : json;
  } catch {
    return json;
  }
}

/** For APIs that need the arguments as a JSON string; a stored string is sent as the model wrote it. */
export function argumentsAsJson(args: Record<string, unknown> | string): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/** For APIs that need the arguments as an object; a string that is not a JSON object becomes `{}`. */
export function argumentsAsObject(args: Record<string, unknown> | string): Record<string, unknown> {
  if (typeof args !== 'string') return args;
  const parsed = parseToolArguments(args);
  return typeof parsed === 'string' ? {} : parsed;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A PDF document as base64 bytes, which both providers take as a file of its own kind. */
export interface PdfPart {
  type: 'pdf';
  data: string;
  name: string;
}

/** A part as a provider's API can take it: text, an image, audio or a PDF. */
export type ModelPart = TextContent | ImageContent | AudioContent | PdfPart;

/** What a provider's API takes besides text: image MIME types, audio MIME types, PDFs. */
export interface ModelTakes {
  images: (mimeType: string) => boolean;
  audio: (mimeType: string) => boolean;
  pdf: boolean;
}

/**
 * Content as the parts a provider takes: images, audio and PDFs (also
 * embedded as a resource's bytes) where `takes` says it takes them; an
 * embedded text resource as its text under its URI; everything else (a
 * resource link, audio or a file the API takes no part for) as one line of
 * text saying what it was and that it was not sent.
 */
export function modelParts(content: Content[], provider: string, takes: ModelTakes): ModelPart[] {
  return content.map((part): ModelPart => {
    switch (part.type) {
      case 'text':
        return part;
      case 'image':
        return takes.images(part.mimeType) ? part : notSent(part, provider);
      case 'audio':
        return takes.audio(part.mimeType) ? part : notSent(part, provider);
      case 'resource': {
        const { resource } = part;
        if (!('blob' in resource)) return { type: 'text', text: partAsText(part) };
        const mimeType = resource.mimeType ?? '';
        if (takes.images(mimeType)) return { type: 'image', data: resource.blob, mimeType };
        if (takes.audio(mimeType)) return { type: 'audio', data: resource.blob, mimeType };
        if (takes.pdf && mimeType === 'application/pdf')
          return { type: 'pdf', data: resource.blob, name: resource.uri };
        return notSent(part, provider);
      }
      case 'resource_link':
        return { type: 'text', text: partAsText(part) };
    }
  });
}

function notSent(part: Content, provider: string): TextContent {
  return { type: 'text', text: `${partAsText(part)} (not sent: the ${provider} API takes no such part)` };
}

export function textParts(content: Content[]): TextContent[] {
  return content.filter((part): part is TextContent => part.type === 'text');
}

export function imageParts(content: Content[]): ImageContent[] {
  return content.filter((part): part is ImageContent => part.type === 'image');
}

export function joinedText(content: Content[]): string {
  return textParts(content)
    .map((part) => part.text)
    .join('\n');
}

/**
 * Some OpenAI-compatible servers end a tool-call turn with `stop`, so the
 * calls themselves decide; only a cut-off (`length`) wins over them.
 */
export function stopReasonFor(finish: 'stop' | 'length', hasToolCalls: boolean): StopReason {
  if (finish === 'length') return 'length';
  return hasToolCalls ? 'toolUse' : 'stop';
}

/** Collects one tool call's streamed pieces until its arguments are complete. */
export interface PendingToolCall {
  id: string;
  name: string;
  json: string;
}

export function finishToolCall(call: PendingToolCall): ToolCallContent {
  return { type: 'toolCall', id: call.id, name: call.name, arguments: parseToolArguments(call.json) };
}

export function assistantMessage(fields: {
  content: AssistantMessage['content'];
  stopReason: StopReason;
  errorMessage?: string | undefined;
  usage: Usage | undefined;
  model: string;
}): AssistantMessage {
  const message: AssistantMessage = {
    role: 'assistant',
    content: fields.content,
    stopReason: fields.stopReason,
    model: fields.model,
    timestamp: Date.now(),
  };
  if (fields.errorMessage !== undefined) message.errorMessage = fields.errorMessage;
  if (fields.usage !== undefined) message.usage = fields.usage;
  return message;
}

/** An error status, for the person running the agent. `server` is e.g. `OpenAI` or `The server at <url>`. */
export function describeHttpError(server: string, status: number, serverMessage: string): string {
  const detail = serverMessage ? `: ${serverMessage}` : '';
  if (status === 401) return `${server} rejected the API key (HTTP 401)${detail}`;
  return `${server} answered HTTP ${status}${detail}`;
}

/** A request that never got a response: refused, DNS, TLS, timeout. */
export function describeConnectionError(error: unknown, baseURL: string): string {
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') {
    return `The server at ${baseURL} could not be reached (connection refused)`;
  }
  return `The server at ${baseURL} could not be reached: ${causeChain(error)}`;
}

/** A response whose body broke off or could not be read. */
export function describeStreamError(error: unknown): string {
  if (error instanceof SyntaxError) return `The server sent an event that is not valid JSON: ${error.message}`;
  return `The stream was cut off before the response finished: ${causeChain(error)}`;
}

/** Node puts the useful part (`ECONNREFUSED`, `other side closed`) in nested `cause`s. */
function causeChain(error: unknown): string {
  const messages: string[] = [];
  for (let current: unknown = error; current instanceof Error && messages.length < 5; current = current.cause) {
    if (current.message && !messages.includes(current.message)) messages.push(current.message);
  }
  return messages.length ? messages.join(': ') : String(error);
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    if (typeof current !== 'object') return undefined;
    const code: unknown = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    // undici reports a refused connection to a host with several addresses as an AggregateError.
    if (current instanceof AggregateError) {
      const inner = current.errors.map(errorCode).find((c) => c !== undefined);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The per-turn state a provider keeps while its stream is read. */
export interface StreamingTurn<Chunk> {
  apply(chunk: Chunk): Iterable<ModelStreamEvent>;
  finish(modelName: string, aborted: boolean): AssistantMessage;
  fail(modelName: string, errorMessage: string): AssistantMessage;
}

/**
 * The read loop both providers share: open the SDK stream, turn each chunk
 * into events, and always end with one `done` — aborted, failed or finished —
 * never with a thrown error.
 */
export async function* streamModelTurn<Chunk>(options: {
  modelName: string;
  request: ModelRequest;
  turn: StreamingTurn<Chunk>;
  open: () => Promise<AsyncIterable<Chunk>>;
  /** `responded`: the server answered before the failure (so it is not a connection error). */
  describeFailure: (error: unknown, responded: boolean) => string;
}): AsyncGenerator<ModelStreamEvent> {
  const { modelName, request, turn } = options;
  let responded = false;
  try {
    const stream = await options.open();
    responded = true;
    for await (const chunk of stream) {
      // Stop at once, so the partial content is exactly what was streamed before the abort.
      if (request.signal.aborted) break;
      yield* turn.apply(chunk);
    }
    yield { type: 'done', message: turn.finish(modelName, request.signal.aborted) };
  } catch (error) {
    const message = request.signal.aborted
      ? turn.finish(modelName, true)
      : turn.fail(modelName, options.describeFailure(error, responded));
    yield { type: 'done', message };
  }
}
