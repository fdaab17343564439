/**
 * The part of the provider wire-format servers that does not depend on the
 * provider: a local HTTP server on 127.0.0.1 that answers one POST path with
 * the next scripted response (a server-sent-event stream, possibly cut off
 * or left hanging, or an HTTP error) and records every request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted response, with the stream already rendered as SSE frames. */
export type SseResponse =
  | {
      kind: 'stream';
      frames: string[];
      /** Stop after this many frames: `destroy` breaks the socket, `end` closes the body cleanly. */
      cutAfter?: number;
      cut?: 'destroy' | 'end';
      /** Send this many frames, then keep the response open until the client goes away. */
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

export interface ScriptedServer<Script> {
  /** `http://127.0.0.1:<port>`, without `/v1`. */
  origin: string;
  requests: RecordedRequest[];
  enqueue(...scripts: Script[]): void;
  close(): Promise<void>;
}

export interface ServerDialect<Script> {
  path: string;
  render: (script: Script) => SseResponse;
  /** Error bodies in the provider's own shape. */
  notFound: (method: string, url: string) => unknown;
  noScriptLeft: () => unknown;
  jsonHeaders?: Record<string, string>;
}

export async function startScriptedServer<Script>(dialect: ServerDialect<Script>): Promise<ScriptedServer<Script>> {
  const queue: Script[] = [];
  const requests: RecordedRequest[] = [];
  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...dialect.jsonHeaders, ...headers });
    res.end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const { method = '', url = '' } = req;
    if (method !== 'POST' || url !== dialect.path) return sendJson(res, 404, dialect.notFound(method, url));
    requests.push({ method, url, headers: req.headers, body: JSON.parse(raw) as Record<string, unknown> });
    const script = queue.shift();
    if (script === undefined) return sendJson(res, 500, dialect.noScriptLeft());
    const response = dialect.render(script);
    if (response.kind === 'error') return sendJson(res, response.status, response.body, response.headers);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    if (response.kind === 'raw') return void res.end(response.body);
    streamFrames(res, response);
  }

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...scripts) => void queue.push(...scripts),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function streamFrames(res: ServerResponse, response: Extract<SseResponse, { kind: 'stream' }>): void {
  const stopAt = response.cutAfter ?? response.hangAfter;
  if (stopAt === undefined) return void res.end(response.frames.join(''));
  const sent = response.frames.slice(0, stopAt).join('');
  if (response.hangAfter !== undefined) return void res.write(sent);
  if (response.cut === 'end') return void res.end(sent);
  // Destroy only once the frames reached the socket, so the client sees them and then a broken body.
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
