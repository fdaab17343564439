import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AdapterErrors, errorMessage } from '../../core/errors.ts';
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

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
}

/**
 * Serves the executor over Streamable HTTP on 127.0.0.1 at `/mcp`. Each
 * client session gets its own MCP server (an SDK server speaks to one
 * transport) over the one shared executor, so the pool bounds all sessions
 * together. Sessions are stateful because cancellation needs it: a
 * `notifications/cancelled` arrives in a later POST and must reach the
 * server that runs the call.
 */
export async function serveOverHttp(executor: McpExecutor, options: McpHttpOptions): Promise<McpHttpHost> {
  const sessions = new Map<string, Session>();
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
    const id = request.headers['mcp-session-id'];
    if (typeof id === 'string') {
      const session = sessions.get(id);
      if (!session) return sendError(response, 404, AdapterErrors.httpSessionNotFound(), -32001);
      return session.transport.handleRequest(request, response);
    }
    // No session yet: only an initialize request may open one. The transport
    // checks that (and answers 400 otherwise); a session it did not start is dropped.
    const session = await openSession();
    await session.transport.handleRequest(request, response);
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
      await Promise.all([...sessions.values()].map((session) => session.close()));
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
