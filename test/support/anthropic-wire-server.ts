/**
 * A local HTTP server that answers `POST /v1/messages` the way the Anthropic
 * API streams: named server-sent events (`event: <type>\ndata: {...}`) from
 * message_start to message_stop, with a ping after the first block starts.
 * Each request takes the next scripted response from a queue, and every
 * request is recorded.
 */
import { startScriptedServer, type ScriptedServer } from './scripted-sse-server.ts';

export type { RecordedRequest } from './scripted-sse-server.ts';

export type AnthropicEvent = { type: string } & Record<string, unknown>;

export type AnthropicScript =
  | {
      kind: 'stream';
      events: AnthropicEvent[];
      /** Stop after this many events: `destroy` breaks the socket, `end` closes the body cleanly. */
      cutAfter?: number;
      cut?: 'destroy' | 'end';
      /** Send this many events, then keep the response open until the client goes away. */
      hangAfter?: number;
    }
  | { kind: 'error'; status: number; body: unknown; headers?: Record<string, string> };

export type AnthropicWireServer = ScriptedServer<AnthropicScript>;

export function startAnthropicWireServer(): Promise<AnthropicWireServer> {
  return startScriptedServer<AnthropicScript>({
    path: '/v1/messages',
    jsonHeaders: { 'request-id': 'req_test' },
    notFound: (method, url) => anthropicError('not_found_error', `Not found: ${method} ${url}`),
    noScriptLeft: () => anthropicError('api_error', 'anthropic-wire-server: no scripted response left'),
    render: (script) => {
      if (script.kind !== 'stream') return script;
      const { events, ...rest } = script;
      return { ...rest, frames: events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`) };
    },
  });
}

/** The error body the Anthropic API sends with a 4xx/5xx, and inside an `error` event. */
export function anthropicError(
  type: string,
  message: string,
): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type, message } };
}

// ---------------------------------------------------------------- event builders

export const anthropicEvents = {
  messageStart: (inputTokens: number): AnthropicEvent => ({
    type: 'message_start',
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  }),
  textStart: (index: number): AnthropicEvent => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'text', text: '' },
  }),
  ping: (): AnthropicEvent => ({ type: 'ping' }),
  text: (index: number, text: string): AnthropicEvent => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'text_delta', text },
  }),
  toolUseStart: (index: number, id: string, name: string): AnthropicEvent => ({
    type: 'content_block_start',
    index,
    content_block: { type: 'tool_use', id, name, input: {} },
  }),
  inputJson: (index: number, partialJson: string): AnthropicEvent => ({
    type: 'content_block_delta',
    index,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  }),
  blockStop: (index: number): AnthropicEvent => ({ type: 'content_block_stop', index }),
  messageDelta: (stopReason: string, outputTokens: number): AnthropicEvent => ({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: outputTokens },
  }),
  messageStop: (): AnthropicEvent => ({ type: 'message_stop' }),
  error: (type: string, message: string): AnthropicEvent => anthropicError(type, message),
};

/** A whole text reply in one text block, as the API streams it. */
export function anthropicTextReply(pieces: string[], usage: [number, number] = [10, pieces.length]): AnthropicScript {
  const e = anthropicEvents;
  return {
    kind: 'stream',
    events: [
      e.messageStart(usage[0]),
      e.textStart(0),
      e.ping(),
      ...pieces.map((piece) => e.text(0, piece)),
      e.blockStop(0),
      e.messageDelta('end_turn', usage[1]),
      e.messageStop(),
    ],
  };
}
