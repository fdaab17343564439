// The anchor of case 18's serve rows: a plain MCP server of the official SDK
// over stdio, with the same three tools as the cold project's modules (zod
// schemas, as `registerTool` takes them), run by plain `node`.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bare', version: '1.0.0' });
const text = (value) => ({ content: [{ type: 'text', text: value }] });
server.registerTool(
  'echo',
  { description: 'Cold-start tool echo.', inputSchema: { text: z.string() } },
  ({ text: value }) => text(value),
);
server.registerTool(
  'sum',
  { description: 'Cold-start tool sum.', inputSchema: { a: z.number(), b: z.number() } },
  ({ a, b }) => text(String(a + b)),
);
server.registerTool(
  'upper',
  { description: 'Cold-start tool upper.', inputSchema: { text: z.string() } },
  ({ text: value }) => text(value.toUpperCase()),
);
await server.connect(new StdioServerTransport());
