// CPU profile of executeBatch calls of a warm MCP server (process tier): node --cpu-prof --import tsx bench/profile/mcp-call-cpu.ts
import { fileURLToPath } from 'node:url';
import { toolpool } from '../lib/toolpool.ts';

const SERVER = fileURLToPath(new URL('../tools/mcp-echo-server.mjs', import.meta.url));
const { createExecutor } = await toolpool();
const executor = await createExecutor({
  mcpServers: { b: { command: process.execPath, args: [SERVER], isolation: 'process' } },
});
const batch = [{ id: '1', name: 'b_echo', arguments: { text: 'hi' } }];
for (let i = 0; i < 20_000; i++) await executor.executeBatch(batch);
await executor.close();
