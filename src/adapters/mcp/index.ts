/// <reference types="node" preserve="true" />
// toolpool/mcp: serve an executor's tools to any MCP client.
export { createMcpServer } from './server.ts';
export { serveOverHttp } from './http-host.ts';
export type { McpHttpHost, McpHttpOptions } from './http-host.ts';
export type { McpExecutor, McpServerOptions } from './types.ts';
