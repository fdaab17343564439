/**
 * A local HTTP server that answers `POST /v1/chat/completions` the way the
 * OpenAI API streams: `data: {chat.completion.chunk}` lines, a usage chunk
 * with empty `choices`, then `data: [DONE]`. Each request takes the next
 * scripted response from a queue, and every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface OpenAIWireServer {
  /** `http://127.0.0.1:<port>`, without `/v1`. */
  origin: string;
  requests: RecordedRequest[];
  enqueue(...scripts: OpenAIScript[]): void;
  close(): Promise<void>;
}

export async function startOpenAIWireServer(): Promise<OpenAIWireServer> {
  const queue: OpenAIScript[] = [];
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    void handle(req, res);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      sendJson(res, 404, openaiError(`Unknown request URL: ${req.method} ${req.url}`, 'invalid_request_error', 'unknown_url'));
      return;
    }
    requests.push({ method: req.method, url: req.url, headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
    const script = queue.shift();
    if (!script) {
      sendJson(res, 500, openaiError('openai-wire-server: no scripted response left', 'server_error', null));
      return;
    }
    if (script.kind === 'error') {
      sendJson(res, script.status, script.body, script.headers);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    if (script.kind === 'raw') {
      res.end(script.body);
      return;
    }
    streamChunks(res, script);
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

function streamChunks(res: ServerResponse, script: Extract<OpenAIScript, { kind: 'stream' }>): void {
  const lines = script.chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  const stopAt = script.cutAfter ?? script.hangAfter;
  if (stopAt === undefined) {
    res.end(lines.join('') + 'data: [DONE]\n\n');
    return;
  }
  const sent = lines.slice(0, stopAt).join('');
  if (script.hangAfter !== undefined) {
    res.write(sent);
    return;
  }
  if (script.cut === 'end') {
    res.end(sent);
    return;
  }
  // Destroy only once the chunks reached the socket, so the client sees them and then a broken body.
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
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
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
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
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
