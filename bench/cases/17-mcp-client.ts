/**
 * Case 17: toolpool as an MCP client (issue 16) against the bare SDK client
 * (`Client` + `StdioClientTransport`) on the same stdio server: the first
 * listed tool (start to the first tools/list answer) and a trivial call of
 * a warm server, with toolpool's server in the process tier and in the
 * sandbox tier. Interleaved rounds; ratios are medians over the same rounds.
 */
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { toolpool } from '../lib/toolpool.ts';
import { toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const SERVER = fileURLToPath(new URL('../tools/mcp-echo-server.mjs', import.meta.url));
const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));

const ROWS = [
  'bare SDK client: start to first tools/list',
  'toolpool, process tier: start to first tools/list',
  'toolpool, sandbox tier: start to first tools/list',
  'bare SDK client: trivial call',
  'toolpool, process tier: trivial call',
  'toolpool, sandbox tier: trivial call',
] as const;

type Variant = 'sdk' | 'process' | 'sandbox';
type Toolpool = Awaited<ReturnType<typeof toolpool>>;

/** A started server, however it was reached, with one way to call its echo tool. */
interface Started {
  call(): Promise<unknown>;
  close(): Promise<void>;
}

async function bareSdk(): Promise<Started> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER], stderr: 'ignore' }));
  await client.listTools();
  return { call: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }), close: () => client.close() };
}

async function viaToolpool({ createExecutor }: Toolpool, isolation: 'process' | 'sandbox'): Promise<Started> {
  const permissions = isolation === 'sandbox' ? { permissions: { fsRead: [SERVER, NODE_MODULES] } } : {};
  // createExecutor resolves once the server answered its first tools/list.
  const executor = await createExecutor({
    mcpServers: { bench: { command: process.execPath, args: [SERVER], isolation, ...permissions } },
  });
  const batch = [toolCall('c1', 'bench_echo', { text: 'hi' })];
  return { call: () => executor.executeBatch(batch), close: () => executor.close() };
}

export const mcpClient: BenchCase = {
  id: 17,
  title: 'MCP client: toolpool vs the bare SDK client, first tools/list and a trivial call',
  rowNames: ROWS,
  async run({ quick, log }) {
    const tp = await toolpool();
    const start: Record<Variant, () => Promise<Started>> = {
      sdk: bareSdk,
      process: () => viaToolpool(tp, 'process'),
      sandbox: () => viaToolpool(tp, 'sandbox'),
    };

    const coldRounds = quick ? 1 : 20;
    log(`case 17: ${coldRounds} starts per variant`);
    const coldStart = (variant: Variant) => async () => {
      const begin = performance.now();
      const started = await start[variant]();
      const ms = performance.now() - begin;
      await started.close();
      return [ms];
    };
    const cold = await interleave(
      { sdk: coldStart('sdk'), process: coldStart('process'), sandbox: coldStart('sandbox') },
      { rounds: coldRounds, warmupRounds: 1 },
    );

    const rounds = quick ? 1 : 20;
    const perBlock = quick ? 20 : 300;
    log(`case 17: ${rounds} rounds x ${perBlock} trivial calls per variant`);
    const servers = { sdk: await start.sdk(), process: await start.process(), sandbox: await start.sandbox() };
    let warm;
    try {
      warm = await interleave(
        {
          sdk: () => timeEach(perBlock, servers.sdk.call),
          process: () => timeEach(perBlock, servers.process.call),
          sandbox: () => timeEach(perBlock, servers.sandbox.call),
        },
        { rounds, warmupRounds: 1 },
      );
    } finally {
      await Promise.all(Object.values(servers).map((server) => server.close()));
    }

    const coldVsSdk = { process: ratioOf(cold.process, cold.sdk), sandbox: ratioOf(cold.sandbox, cold.sdk) };
    const sandboxVsProcess = ratioOf(cold.sandbox, cold.process);
    const warmVsSdk = { process: ratioOf(warm.process, warm.sdk), sandbox: ratioOf(warm.sandbox, warm.sdk) };
    const c = {
      sdk: summarize(cold.sdk.samples),
      process: summarize(cold.process.samples),
      sandbox: summarize(cold.sandbox.samples),
    };
    const w = {
      sdk: summarize(warm.sdk.samples),
      process: summarize(warm.process.samples),
      sandbox: summarize(warm.sandbox.samples),
    };
    return {
      id: 17,
      title: mcpClient.title,
      rows: [
        row(ROWS[0], 'ms', c.sdk.median, {
          n: c.sdk.n,
          note: 'Client.connect(StdioClientTransport) + listTools; node + the SDK server',
        }),
        row(ROWS[1], 'ms', c.process.median, {
          n: c.process.n,
          vs: { row: ROWS[0], ratio: coldVsSdk.process.value, range: coldVsSdk.process.range },
          note: 'createExecutor({ mcpServers }), PID namespace (bwrap)',
        }),
        row(ROWS[2], 'ms', c.sandbox.median, {
          n: c.sandbox.n,
          vs: { row: ROWS[0], ratio: coldVsSdk.sandbox.value, range: coldVsSdk.sandbox.range },
          note: "the same in the sandbox: bwrap + toolpool's Node entry + the server",
        }),
        row(ROWS[3], 'µs', w.sdk.median, { p99: w.sdk.p99, n: w.sdk.n, note: 'client.callTool, one at a time' }),
        row(ROWS[4], 'µs', w.process.median, {
          p99: w.process.p99,
          n: w.process.n,
          vs: { row: ROWS[3], ratio: warmVsSdk.process.value, range: warmVsSdk.process.range },
          note: 'executeBatch of one call: validation, events, limits',
        }),
        row(ROWS[5], 'µs', w.sandbox.median, {
          p99: w.sandbox.p99,
          n: w.sandbox.n,
          vs: { row: ROWS[3], ratio: warmVsSdk.sandbox.value, range: warmVsSdk.sandbox.range },
        }),
      ],
      targets: [
        {
          name: 'Trivial call through toolpool (sandbox) vs the bare SDK client',
          measured: warmVsSdk.sandbox.value,
          shown: `${warmVsSdk.sandbox.value.toFixed(2)}x`,
          goal: '<= 1.20x',
          met: warmVsSdk.sandbox.value <= 1.2,
        },
        {
          name: "Sandboxed start vs the bare SDK client's (unsandboxed) start",
          measured: coldVsSdk.sandbox.value,
          shown: `${coldVsSdk.sandbox.value.toFixed(2)}x`,
          goal: '<= 1.20x',
          met: coldVsSdk.sandbox.value <= 1.2,
        },
        {
          name: "Sandboxed start vs toolpool's process-tier start",
          measured: sandboxVsProcess.value,
          shown: `${sandboxVsProcess.value.toFixed(2)}x`,
          goal: '<= 1.20x',
          met: sandboxVsProcess.value <= 1.2,
        },
      ],
      notes: [],
    };
  },
};
