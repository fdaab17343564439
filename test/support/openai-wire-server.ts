/**
 * A local HTTP server that answers `POST /v1/chat/completions` the way the
 * OpenAI API streams: `data: {chat.completion.chunk}` lines, a usage chunk
 * with empty `choices`, then `data: [DONE]`. Each request takes the next
 * scripted response from a queue, and every request is recorded.
 */
import { startScriptedServer, type ScriptedServer } from './scripted-sse-server.ts';

export type { RecordedRequest } from './scripted-sse-server.ts';

export type OpenAIChunk = Record<string, unknown>;

export type OpenAIScript =
  | {
      kind: 'stream';
      chunks: OpenAIChunk[];
      /** Stop after this many chunks: `destroy` breaks the socket, `end` closes the body cleanly without `[DONE]`. */
      cutAfter?: number;
      cut?: 'destroy' | 'end';
      /** Send this many chunks, then keep the response open until the client goes away. */
      hangAfter?: number;
    }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> }
  /** A raw SSE body, for bytes no well-behaved server sends. */
  | { kind: 'raw'; body: string };

export type OpenAIWireServer = ScriptedServer<OpenAIScript>;

export function startOpenAIWireServer(): Promise<OpenAIWireServer> {
  return startScriptedServer<OpenAIScript>({
    path: '/v1/chat/completions',
    notFound: (method, url) =>
      openaiError(`Unknown request URL: ${method} ${url}`, 'invalid_request_error', 'unknown_url'),
    noScriptLeft: () => openaiError('openai-wire-server: no scripted response left', 'server_error', null),
    render: (script) => {
      if (script.kind !== 'stream') return script;
      const { chunks, ...rest } = script;
      const frames = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
      // `[DONE]` ends only a stream that is not cut off.
      const complete = script.cutAfter === undefined && script.hangAfter === undefined;
      return { ...rest, frames: complete ? [...frames, 'data: [DONE]\n\n'] : frames };
    },
  });
}

/** The error body the OpenAI API sends with a 4xx/5xx. */
export function openaiError(message: string, type: string, code: string | null): unknown {
  return { error: { message, type, param: null, code } };
}

// ---------------------------------------------------------------- chunk builders

const created = 1_767_225_600;

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChunk {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created,
    model: 'gpt-test',
    system_fingerprint: 'fp_test',
    // With include_usage every chunk carries `usage: null` until the last one.
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    usage: null,
  };
}

export const openaiChunks = {
  role: (): OpenAIChunk => chunk({ role: 'assistant', content: '', refusal: null }),
  text: (content: string): OpenAIChunk => chunk({ content }),
  toolCallStart: (index: number, id: string, name: string): OpenAIChunk =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }),
  toolCallArgs: (index: number, fragment: string): OpenAIChunk =>
    chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }),
  finish: (reason: 'stop' | 'length' | 'tool_calls' | 'content_filter'): OpenAIChunk => chunk({}, reason),
  usage: (promptTokens: number, completionTokens: number): OpenAIChunk => ({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created,
    model: 'gpt-test',
    system_fingerprint: 'fp_test',
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  }),
};

/** A whole text reply: role chunk, one chunk per piece, `stop`, usage. */
export function openaiTextReply(pieces: string[], usage: [number, number] = [10, pieces.length]): OpenAIScript {
  return {
    kind: 'stream',
    chunks: [
      openaiChunks.role(),
      ...pieces.map(openaiChunks.text),
      openaiChunks.finish('stop'),
      openaiChunks.usage(...usage),
    ],
  };
}
