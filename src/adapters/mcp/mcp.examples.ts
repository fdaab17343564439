/**
 * The README's "Use with MCP clients" example, type-checked with the rest
 * (test/adapters/readme-examples.test.ts checks the README quotes it and
 * runs it). Run it from the repository root: `node --import tsx src/adapters/mcp/mcp.examples.ts`.
 */
// #region readme
// mcp-server.ts: serve your tools to any MCP client over stdio.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createExecutor } from '../../index.ts';
import { createMcpServer } from './index.ts';

const executor = await createExecutor({
  tools: ['./tools/hash.ts', './tools/calculator.ts'],
  isolation: 'process', // or 'sandbox' (bubblewrap) where available: the strongest
  limits: { timeoutMs: 10_000, maxMemoryMb: 128 },
});
const server = createMcpServer(executor, { name: 'my-tools', version: '1.0.0' });
await server.connect(new StdioServerTransport());
process.stdin.once('end', async () => {
  await server.close(); // aborts calls still running
  await executor.close(); // stops the workers and the child process
  process.stdin.destroy();
});
// #endregion
