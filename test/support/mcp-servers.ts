import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { McpStdioServer } from '../../src/core/mcp-config.ts';
import { buildModernServer } from '../fixtures/mcp/modern-server.mjs';
import { buildServer } from '../fixtures/mcp/tools.mjs';

export const MCP_FIXTURES = fileURLToPath(new URL('../fixtures/mcp', import.meta.url));
export const MCP_SERVER = `${MCP_FIXTURES}/server.mjs`;
/** The SDK v2 server that speaks 2026-07-28 only; `--stdio` serves it over stdio. */
export const MODERN_MCP_SERVER = `${MCP_FIXTURES}/modern-server.mjs`;
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));

/**
 * The test server over stdio, in the sandbox by default: a Node server
 * needs its script and its node_modules in fsRead.
 */
export function stdioServer(extra: Partial<McpStdioServer> = {}, flags: string[] = []): McpStdioServer {
  const { permissions, ...rest } = extra;
  return {
    command: process.execPath,
    args: [MCP_SERVER, ...flags],
    ...rest,
    ...(rest.isolation === 'process'
      ? {}
      : { permissions: { ...permissions, fsRead: [MCP_FIXTURES, NODE_MODULES, ...(permissions?.fsRead ?? [])] } }),
  };
}

export interface HttpMcpServer {
  url: string;
  /** Sessions open now. */
  sessions(): number;
  close(): Promise<void>;
}

/**
 * The test server over Streamable HTTP on 127.0.0.1 (a free port), one SDK
 * server per session; `token` makes it answer 401 without `Authorization:
 * Bearer <token>`, `mutePings` leaves pings unanswered, `revision` lists a
 * tool telling the revision its initialize settled on.
 */
export async function startHttpMcpServer(
  options: { token?: string; mutePings?: boolean; revision?: boolean } = {},
): Promise<HttpMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: HttpServer = createServer((request, response) => {
    if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
      response
        .writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
        .end('{"error":"unauthorized"}');
      return;
    }
    void (async () => {
      const id = request.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: randomUUID,
          onsessioninitialized: (sid) => void sessions.set(sid, created),
        });
        created.onclose = () => void (created.sessionId !== undefined && sessions.delete(created.sessionId));
        await buildServer({ mutePings: options.mutePings === true, revision: options.revision === true }).connect(
          created,
        );
        transport = created;
      }
      await transport.handleRequest(request, response);
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions: () => sessions.size,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

/**
 * The SDK v2 test server (modern-server.mjs) over Streamable HTTP on
 * 127.0.0.1 (a free port), through the SDK's own handler: 2026-07-28 only
 * (a 2025-era request is refused). A request whose client goes away is
 * aborted, as a real host does (that is how 2026-07-28 cancels a call over
 * HTTP).
 */
export async function startModernHttpMcpServer(): Promise<HttpMcpServer> {
  const handler: McpHttpHandler = createMcpHandler(() => buildModernServer(() => handler.notify.toolsChanged()), {
    legacy: 'reject',
  });
  const http: HttpServer = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      const gone = new AbortController();
      response.once('close', () => gone.abort());
      const answer = await handler.fetch(
        new Request(`http://127.0.0.1${request.url ?? '/'}`, {
          method: request.method ?? 'GET',
          headers,
          signal: gone.signal,
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        }),
      );
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      if (answer.body) for await (const chunk of answer.body) if (!response.destroyed) response.write(chunk);
      response.end();
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions: () => 0, // 2026-07-28 has no sessions
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
