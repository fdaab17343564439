import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { AdapterErrors, errorMessage } from '../../core/errors.ts';
import { createModernServer } from './modern-server.ts';
import { dropWhenUnread } from './unread-answers.ts';
import { createMcpServer } from './server.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

export interface McpHttpHost {
  /** The endpoint, e.g. `http://127.0.0.1:3000/mcp` (with the real port when 0 was asked for). */
  readonly url: string;
  /** Stops serving: closes every session (their in-flight calls are aborted) and the listener. Does not close the executor. */
  close(): Promise<void>;
}

export interface McpHttpOptions extends McpServerOptions {
  /** 0 picks a free port. */
  port: number;
}

const HOST = '127.0.0.1';
const PATH = '/mcp';
const LOCAL_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** The largest POST body read (the SDKs' own bound). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

/**
 * Serves the executor over Streamable HTTP on 127.0.0.1 at `/mcp`, to
 * clients of every revision toolpool speaks: a request that carries the
 * 2026-07-28 envelope goes to the MCP SDK v2's own handler (one server per
 * request, no session; see modern-server.ts), everything else (the 2025
 * revisions the SDK 1.x clients speak) to a session of `createMcpServer`.
 * Each 2025 client session gets its own MCP server (an SDK server speaks
 * to one transport) over the one shared executor, so the pool bounds all
 * sessions together. Those sessions are stateful because cancellation
 * needs it: a `notifications/cancelled` arrives in a later POST and must
 * reach the server that runs the call.
 */
export async function serveOverHttp(executor: McpExecutor, options: McpHttpOptions): Promise<McpHttpHost> {
  const sessions = new Map<string, Session>();
  const modern = createMcpHandler(() => createModernServer(executor, options), { legacy: 'reject' });
  // 2026-07-28 clients hear of a change on their subscriptions/listen stream (2025 sessions: see createMcpServer).
  const stopForwarding = executor.on?.('tools_changed', () => modern.notify.toolsChanged());
  const openSession = async (): Promise<Session> => {
    const server = createMcpServer(executor, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => void sessions.set(id, session),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const session: Session = { transport, close: () => server.close() };
    await server.connect(transport);
    return session;
  };

  const http = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, AdapterErrors.httpFailed(errorMessage(error)));
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refusal = refuse(request);
    if (refusal) return sendError(response, refusal.status, refusal.message);
    dropWhenUnread(response);
    let body: { raw: Buffer; parsed: unknown } | undefined;
    if (request.method === 'POST' && isJsonContentType(request.headers['content-type'] ?? null)) {
      const raw = await readBody(request, MAX_BODY_BYTES);
      if (raw === undefined) return sendError(response, 413, AdapterErrors.httpBodyTooLarge(MAX_BODY_BYTES));
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendError(response, 400, 'Parse error: Invalid JSON', -32700);
      }
      body = { raw, parsed };
      // The SDK's own era decision: the envelope (or a 2026 MCP-Protocol-Version header) means the modern handler.
      if (!(await isLegacyRequest(webRequest(request), parsed))) return serveModern(modern, request, response, body);
    }
    const id = request.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session) return sendError(response, 404, AdapterErrors.httpSessionNotFound(), -32001);
      return session.transport.handleRequest(request, response, body?.parsed);
    }
    // No session yet: only an initialize request may open one. The transport
    // checks that (and answers 400 otherwise); a session it did not start is dropped.
    const session = await openSession();
    await session.transport.handleRequest(request, response, body?.parsed);
    if (session.transport.sessionId === undefined) await session.close();
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, HOST, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${HOST}:${port}${PATH}`,
    async close() {
      stopForwarding?.();
      await Promise.all([modern.close(), ...[...sessions.values()].map((session) => session.close())]);
      sessions.clear();
      await closeListener(http);
    },
  };
}

/** Only `/mcp`, only a Host naming this machine, only a local Origin (DNS rebinding protection for a server without auth). */
function refuse(request: IncomingMessage): { status: number; message: string } | undefined {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (path !== PATH) return { status: 404, message: AdapterErrors.httpNotFound(path) };
  const host = request.headers.host ?? '';
  if (!LOCAL_HOSTNAMES.has(hostnameOf(`http://${host}`)))
    return { status: 403, message: AdapterErrors.httpForbiddenHost(host) };
  const origin = request.headers.origin;
  if (origin !== undefined && !LOCAL_HOSTNAMES.has(hostnameOf(origin))) {
    return { status: 403, message: AdapterErrors.httpForbiddenOrigin(origin) };
  }
  return undefined;
}

/** The POST body, or undefined when it is longer than `limit` (nothing more is read then). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.off('data', onData);
        request.resume();
        return resolve(undefined);
      }
      chunks.push(chunk);
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/** The request as a web Request without its body (the era decision reads the headers and the parsed body). */
function webRequest(request: IncomingMessage, init: RequestInit = {}): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  return new Request(new URL(request.url ?? PATH, `http://${HOST}`), {
    method: request.method ?? 'GET',
    headers,
    ...init,
  });
}

/**
 * A 2026-07-28 request, through the SDK v2's handler: its answer (one JSON
 * body, or an SSE stream with progress before the result) is written back
 * as it comes, without waiting for the client to drain it (dropWhenUnread
 * bounds what waits); a client that goes away aborts the request, and with
 * it the call (the tool's signal fires).
 */
async function serveModern(
  modern: McpHttpHandler,
  request: IncomingMessage,
  response: ServerResponse,
  body: { raw: Buffer; parsed: unknown },
): Promise<void> {
  const gone = new AbortController();
  response.once('close', () => gone.abort());
  const answer = await modern.fetch(webRequest(request, { body: body.raw, signal: gone.signal }), {
    parsedBody: body.parsed,
  });
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  response.writeHead(answer.status, headers);
  if (!answer.body) return void response.end();
  const reader = answer.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || response.destroyed) break;
      response.write(value);
    }
  } catch {
    // The stream failed or was cancelled (the client went away): nothing more to write.
  } finally {
    void reader.cancel().catch(() => undefined);
    response.end();
  }
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

function sendError(response: ServerResponse, status: number, message: string, code = -32000): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function closeListener(http: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    // Open SSE streams would keep close() waiting; the sessions are closed already.
    http.closeAllConnections();
  });
}
