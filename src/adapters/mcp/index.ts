/// <reference types="node" preserve="true" />
// toolpool/mcp: serve an executor's tools to any MCP client.
export { createMcpServer } from './server.ts';
export type { McpExecutor, McpServerOptions } from './types.ts';
