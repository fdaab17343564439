import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpStdioServer } from '../../src/core/mcp-config.ts';
import { buildServer } from '../fixtures/mcp/tools.mjs';

export const MCP_FIXTURES = fileURLToPath(new URL('../fixtures/mcp', import.meta.url));
export const MCP_SERVER = `${MCP_FIXTURES}/server.mjs`;
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
 * Bearer <token>`, `mutePings` leaves pings unanswered.
 */
export async function startHttpMcpServer(
  options: { token?: string; mutePings?: boolean } = {},
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
        await buildServer({ mutePings: options.mutePings === true }).connect(created);
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
