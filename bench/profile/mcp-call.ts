/**
 * Where the time of one MCP call goes: the bare SDK client, toolpool's
 * session alone (its transport and connection, no executor), and the whole
 * executeBatch, interleaved on the same server script; then this process's
 * CPU per call, which a busy machine disturbs less than wall time.
 * `node --import tsx bench/profile/mcp-call.ts`
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { interleave, timeEach } from '../lib/interleave.ts';
import { load, toolpool } from '../lib/toolpool.ts';
import { summarize } from '../lib/stats.ts';

const SERVER = fileURLToPath(new URL('../tools/mcp-echo-server.mjs', import.meta.url));
type Connection = typeof import('../../src/mcp-client/connection.ts');
type ServerProcessModule = typeof import('../../src/mcp-client/server-process.ts');
type Transport = typeof import('../../src/mcp-client/stdio-transport.ts');

const sdk = new Client({ name: 'bench', version: '1.0.0' });
await sdk.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: 'ignore' }));

const { McpConnection } = await load<Connection>('src/mcp-client/connection.ts');
const { ServerProcess } = await load<ServerProcessModule>('src/mcp-client/server-process.ts');
const { StdioTransport } = await load<Transport>('src/mcp-client/stdio-transport.ts');
const server = new ServerProcess({
  command: process.execPath,
  args: [SERVER],
  options: { stdio: ['pipe', 'pipe', 'pipe'], detached: true },
  signalsAsExitCodes: false,
});
const session = await McpConnection.open(new StdioTransport(server, 1 << 24, () => undefined), {
  timeoutMs: 10_000,
  kind: 'stdio',
  onListChanged: () => undefined,
  onClose: () => undefined,
});

const { createExecutor } = await toolpool();
const executor = await createExecutor({
  mcpServers: { b: { command: process.execPath, args: [SERVER], isolation: 'process' } },
});
const batch = [{ id: '1', name: 'b_echo', arguments: { text: 'hi' } }];

const results = await interleave(
  {
    sdk: () => timeEach(300, () => sdk.callTool({ name: 'echo', arguments: { text: 'hi' } })),
    session: () =>
      timeEach(
        300,
        () => session.callTool('echo', { text: 'hi' }, { timeoutMs: 60_000, onProgress: () => undefined }).result,
      ),
    executor: () => timeEach(300, () => executor.executeBatch(batch)),
  },
  { rounds: 15, warmupRounds: 2 },
);
for (const [name, samples] of Object.entries(results))
  console.log(name.padEnd(12), summarize(samples.samples).median.toFixed(1), 'µs wall');

/** This process's CPU per call: what the client side costs, whatever else the machine runs meanwhile. */
async function hostCpu(call: () => Promise<unknown>, count = 3_000): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await call();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}
for (let round = 0; round < 3; round++) {
  const sdkCpu = await hostCpu(() => sdk.callTool({ name: 'echo', arguments: { text: 'hi' } }));
  const executorCpu = await hostCpu(() => executor.executeBatch(batch));
  console.log(
    `host CPU per call: sdk ${sdkCpu.toFixed(1)} µs, executor ${executorCpu.toFixed(1)} µs (${(executorCpu / sdkCpu).toFixed(2)}x)`,
  );
}
await Promise.all([sdk.close(), session.close(), executor.close()]);
server.kill();
