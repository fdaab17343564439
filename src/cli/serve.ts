import { AdapterErrors } from '../core/errors.ts';
import type { Executor } from '../executor/executor.ts';
import { helpFlag, integerFlag } from './args.ts';
import { parseFlags } from './flags.ts';
import { oneLineMessage, runError, usageError } from './errors.ts';
import {
  executorFlags,
  executorFlagsHelp,
  executorLoader,
  logCalls,
  stopSignal,
  toolsFlagHelp,
  withBareAllowNet,
} from './executor-flags.ts';

export const serveHelp = `Usage: toolpool serve (--tools <file|folder>... | --mcp-config <file>) [--http <port>] [options]

Serves tools to MCP clients (Claude Desktop, Claude Code, Cursor, the MCP
Inspector): tool modules, and the tools of other MCP servers run caged (a
sandboxing MCP proxy). Every call runs through toolpool: validation and coercion,
limits, isolation; progress becomes MCP progress notifications, and a
cancelled call is stopped (killed after its grace period if it ignores its
signal). Speaks MCP on stdin/stdout by default; logs go to stderr.

Options:
${toolsFlagHelp}
      --mcp-config <file>     MCP servers to serve the tools of, in the { "mcpServers": { ... } } format
                              of Claude Desktop, Cursor and VS Code; each runs in a sandbox (bubblewrap)
                              unless it says "isolation": "process" (with "permissions": { fsRead,
                              fsWrite, net } for what it may reach)
      --http <port>           Serve Streamable HTTP on 127.0.0.1:<port> at /mcp instead of stdio
                              (0 picks a free port; the URL is logged)
${executorFlagsHelp}
  -h, --help                  Show this help

--isolation, --memory and --allow-* apply to --tools modules; an MCP server of --mcp-config
takes its own from its entry there (--timeout applies to both).

Tools with needsApproval ask the person through the client (MCP elicitation); a client
without it gets an error result saying so.

It stops when stdin closes (stdio) or on SIGINT/SIGTERM, and leaves no workers or child processes.
TOOLPOOL_DEBUG=1 prints the stack of an error that stops it.

Examples (Claude Code):
  claude mcp add toolpool -- npx toolpool serve --tools ./tools
  claude mcp add caged -- npx toolpool serve --mcp-config ./mcp.json`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags('serve', {
    // `--allow-net` may stand alone: then it allows every host.
    args: withBareAllowNet(argv),
    strict: true,
    options: { ...helpFlag, ...executorFlags, 'mcp-config': { type: 'string' }, http: { type: 'string' } },
  });
  if (values.help) {
    process.stdout.write(`${serveHelp}\n`);
    return 0;
  }
  const loadExecutor = executorLoader('serve', values, values['mcp-config']);
  const port = integerFlag('serve', 'http', values.http, 0);
  if (port !== undefined && port > 65_535)
    throw usageError('serve', `--http must be a port number (0-65535), got "${values.http}"`);
  // Listen first: a signal while the tools load still ends in a clean stop, and the "ready" line below means it is heard.
  const stopped = stopSignal();
  // The MCP SDK loads on this thread while the tools' workers start and describe them on theirs.
  const [mcpLoad, executorLoad] = await Promise.allSettled([loadMcp(port !== undefined), loadExecutor()]);
  // A missing SDK is said first: without it no tool could be served anyway.
  if (mcpLoad.status === 'rejected') {
    if (executorLoad.status === 'fulfilled') await executorLoad.value.close();
    throw mcpLoad.reason;
  }
  if (executorLoad.status === 'rejected') throw executorLoad.reason;
  const executor = executorLoad.value;
  const mcp = mcpLoad.value;
  try {
    // One stderr line per finished call: stdout belongs to the protocol.
    logCalls(executor, log);
    const host = await startHost(mcp, executor, port);
    try {
      log(
        `${executor.definitions.length} tool(s) (${executor.definitions.map((d) => d.name).join(', ')}) on ${host.where}`,
      );
      // A client it cannot serve rejects `ended`: the command then fails with that error, after the host is closed.
      const reason = await Promise.race([...(host.ended ? [host.ended] : []), stopped]);
      log(`stopping: ${reason}`);
    } finally {
      await host.close();
    }
  } finally {
    // Also when the host could not start: no worker or child may outlive the command.
    await executor.close();
  }
  return 0;
}

type Mcp = Awaited<ReturnType<typeof loadMcp>>;

/** stdio, or Streamable HTTP when a port was given; `ended` only for stdio (the client closing stdin). */
async function startHost(mcp: Mcp, executor: Executor, port: number | undefined) {
  if (port === undefined) {
    const host = await mcp.stdio.serveOverStdio(executor);
    return { where: 'stdio', ended: host.ended, close: () => host.close() };
  }
  try {
    // Loaded with the SDK when a port was given (loadMcp).
    const host = await mcp.http!.serveOverHttp(executor, { port });
    return { where: host.url, ended: undefined, close: () => host.close() };
  } catch (error) {
    throw runError(`--http ${port}: cannot listen on 127.0.0.1:${port} (${oneLineMessage(error)})`, error);
  }
}

/**
 * The MCP parts need @modelcontextprotocol/sdk, an optional peer dependency: say how to get it.
 * The HTTP host (its transport, Hono) only with --http: a stdio server would load it for nothing.
 */
async function loadMcp(http: boolean) {
  try {
    const [stdio, httpHost] = await Promise.all([
      import('../adapters/mcp/stdio-host.ts'),
      http ? import('../adapters/mcp/http-host.ts') : undefined,
    ]);
    return { stdio, http: httpHost };
  } catch (error) {
    throw runError(AdapterErrors.mcpSdkMissing(oneLineMessage(error)), error);
  }
}

function log(line: string): void {
  process.stderr.write(`toolpool serve: ${line}\n`);
}
