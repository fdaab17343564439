/**
 * A local HTTP server that answers `POST /v1/messages` the way the Anthropic
 * API streams: named server-sent events (`event: <type>\ndata: {...}`) from
 * message_start to message_stop, with a ping after the first block starts.
 * Each request takes the next scripted response from a queue, and every
 * request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface AnthropicWireServer {
  /** `http://127.0.0.1:<port>`, without `/v1`. */
  origin: string;
  requests: RecordedRequest[];
  enqueue(...scripts: AnthropicScript[]): void;
  close(): Promise<void>;
}

export async function startAnthropicWireServer(): Promise<AnthropicWireServer> {
  const queue: AnthropicScript[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/messages') {
      sendJson(res, 404, anthropicError('not_found_error', `Not found: ${req.method} ${req.url}`));
      return;
    }
    requests.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
    const script = queue.shift();
    if (!script) {
      sendJson(res, 500, anthropicError('api_error', 'anthropic-wire-server: no scripted response left'));
      return;
    }
    if (script.kind === 'error') {
      sendJson(res, script.status, script.body, script.headers);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    streamEvents(res, script);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...scripts) => queue.push(...scripts),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function streamEvents(res: ServerResponse, script: Extract<AnthropicScript, { kind: 'stream' }>): void {
  const frames = script.events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  const stopAt = script.cutAfter ?? script.hangAfter;
  if (stopAt === undefined) {
    res.end(frames.join(''));
    return;
  }
  const sent = frames.slice(0, stopAt).join('');
  if (script.hangAfter !== undefined) {
    res.write(sent);
    return;
  }
  if (script.cut === 'end') {
    res.end(sent);
    return;
  }
  // Destroy only once the events reached the socket, so the client sees them and then a broken body.
  res.write(sent, () => res.destroy());
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': 'req_test', ...headers });
  res.end(JSON.stringify(body));
}

/** The error body the Anthropic API sends with a 4xx/5xx, and inside an `error` event. */
export function anthropicError(type: string, message: string): { type: 'error'; error: { type: string; message: string } } {
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
