import { AdapterErrors } from '../errors.ts';
import { createExecutor, type Executor } from '../executor.ts';
import type { ExecutorOptions } from '../options.ts';
import { MIN_MEMORY_MB } from '../limits.ts';
import type { Isolation, ToolLimits } from '../tool.ts';
import { bareFlagValue, helpFlag, integerFlag, splitList } from './args.ts';
import { inFlagTerms, parseFlags } from './flags.ts';
import { oneLineMessage, runError, usageError } from './errors.ts';
import { inConfigTerms, readMcpConfig } from './mcp-config.ts';
import { expandToolPaths } from './tool-paths.ts';

export const serveHelp = `Usage: toolpool serve (--tools <file|folder>... | --mcp-config <file>) [--http <port>] [options]

Serves tools to MCP clients (Claude Desktop, Claude Code, Cursor, the MCP
Inspector): tool modules, and the tools of other MCP servers run caged (a
sandboxing MCP proxy). Every call runs through toolpool: validation and coercion,
limits, isolation; progress becomes MCP progress notifications, and a
cancelled call is stopped (killed after its grace period if it ignores its
signal). Speaks MCP on stdin/stdout by default; logs go to stderr.

Options:
  -t, --tools <file|folder>   Tool modules (default export made with defineTool); a folder loads
                              its .ts/.mts/.js/.mjs files and its subfolders' (not _names or lib/;
                              helpers without a tool export are skipped). Repeatable or comma-separated.
      --mcp-config <file>     MCP servers to serve the tools of, in the { "mcpServers": { ... } } format
                              of Claude Desktop, Cursor and VS Code; each runs in a sandbox (bubblewrap)
                              unless it says "isolation": "process" (with "permissions": { fsRead,
                              fsWrite, net } for what it may reach)
      --http <port>           Serve Streamable HTTP on 127.0.0.1:<port> at /mcp instead of stdio
                              (0 picks a free port; the URL is logged)
      --timeout <ms>          Time limit per call (default 30000; --timeout-ms works too)
      --memory <mb>           Memory limit per tool worker, in MB (process tier: the whole child)
      --isolation <tier>      Where tools run: worker (default), process, or sandbox (bubblewrap,
                              the strongest, where available)
      --allow-read <path>     Run tools under the permission model, reading only these paths
                              (repeatable or comma-separated)
      --allow-write <path>    ... and writing only these
      --allow-net [host:port] Let tools reach the network (alone: any host; Node 25+ denies it
                              otherwise under the permission model); host:port entries
                              (repeatable) need --isolation sandbox
      --env <NAME[=VALUE]>    A variable tools see in process.env: NAME copies it from this
                              environment, NAME=VALUE sets it (repeatable; default: none)
      --tool-options <json>   Options for tool modules whose default export is a factory
                              (default {"root": "<current folder>"})
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
      args: bareFlagValue(argv, 'allow-net', ANY_HOST),
      strict: true,
      options: {
        ...helpFlag,
        tools: { type: 'string', short: 't', multiple: true },
        'mcp-config': { type: 'string' },
        http: { type: 'string' },
        timeout: { type: 'string' },
        'timeout-ms': { type: 'string' },
        memory: { type: 'string' },
        isolation: { type: 'string' },
        'allow-read': { type: 'string', multiple: true },
        'allow-write': { type: 'string', multiple: true },
        'allow-net': { type: 'string', multiple: true },
        env: { type: 'string', multiple: true },
        'tool-options': { type: 'string' },
      },
    });
  if (values.help) {
    process.stdout.write(`${serveHelp}\n`);
    return 0;
  }
  if (!values.tools?.length && values['mcp-config'] === undefined) throw usageError('serve', 'missing --tools <file|folder> or --mcp-config <file>');
  const port = integerFlag('serve', 'http', values.http, 0);
  if (port !== undefined && port > 65_535) throw usageError('serve', `--http must be a port number (0-65535), got "${values.http}"`);
  const limits = limitFlags(values);
  // Listen first: a signal while the tools load still ends in a clean stop, and the "ready" line below means it is heard.
  const stopped = stopSignal();
  const mcp = await loadMcp();
  const executor = await loadExecutor(values, limits);
  try {
    logCalls(executor);
    const host = await startHost(mcp, executor, port);
    log(`${executor.definitions.length} tool(s) (${executor.definitions.map((d) => d.name).join(', ')}) on ${host.where}`);
    const reason = await Promise.race([...(host.ended ? [host.ended] : []), stopped]);
    log(`stopping: ${reason}`);
    await host.close();
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
    const host = await mcp.http.serveOverHttp(executor, { port });
    return { where: host.url, ended: undefined, close: () => host.close() };
  } catch (error) {
    throw runError(`--http ${port}: cannot listen on 127.0.0.1:${port} (${oneLineMessage(error)})`, error);
  }
}

/** The MCP parts need @modelcontextprotocol/sdk, an optional peer dependency: say how to get it. */
async function loadMcp() {
  try {
    const [stdio, http] = await Promise.all([import('../adapters/mcp/stdio-host.ts'), import('../adapters/mcp/http-host.ts')]);
    return { stdio, http };
  } catch (error) {
    throw runError(AdapterErrors.mcpSdkMissing(oneLineMessage(error)), error);
  }
}

interface ServeValues {
  tools?: string[];
  'mcp-config'?: string;
  timeout?: string;
  'timeout-ms'?: string;
  memory?: string;
  isolation?: string;
  'allow-read'?: string[];
  'allow-write'?: string[];
  'allow-net'?: string[];
  env?: string[];
  'tool-options'?: string;
}

/** What `--allow-net` alone stands for. */
const ANY_HOST = '*';

/** `--timeout` (or its older name `--timeout-ms`) and `--memory`, as the executor's limits. */
function limitFlags(values: ServeValues): ToolLimits {
  if (values.timeout !== undefined && values['timeout-ms'] !== undefined) {
    throw usageError('serve', '--timeout and --timeout-ms are the same option; give one');
  }
  const timeoutMs = values.timeout !== undefined ? integerFlag('serve', 'timeout', values.timeout) : integerFlag('serve', 'timeout-ms', values['timeout-ms']);
  const maxMemoryMb = integerFlag('serve', 'memory', values.memory, MIN_MEMORY_MB);
  return { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(maxMemoryMb !== undefined ? { maxMemoryMb } : {}) };
}

/**
 * `--allow-read`, `--allow-write` and `--allow-net` as the executor's
 * permissions. Files flags turn the permission model on; `--allow-net` alone
 * changes nothing then (without the model tools reach the network anyway),
 * while a host:port list is the sandbox tier's network permission.
 */
function permissionFlags(values: ServeValues): Pick<ExecutorOptions, 'permissions'> {
  const fsRead = splitList(values['allow-read']);
  const fsWrite = splitList(values['allow-write']);
  const hosts = splitList(values['allow-net']);
  const net = hosts.length === 0 ? undefined : hosts.includes(ANY_HOST) ? true : hosts;
  const files = fsRead.length > 0 || fsWrite.length > 0 ? { fsRead, fsWrite } : undefined;
  if (!files && (net === undefined || net === true)) return {};
  return { permissions: { ...files, ...(net !== undefined ? { net } : {}) } };
}

/** `--env NAME` copies a variable from this environment (when it is set), `--env NAME=VALUE` sets one. */
function envFlags(values: ServeValues): Pick<ExecutorOptions, 'env'> {
  if (!values.env?.length) return {};
  const env: Record<string, string> = {};
  for (const entry of values.env) {
    const equals = entry.indexOf('=');
    const name = equals < 0 ? entry : entry.slice(0, equals);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw usageError('serve', `--env must be NAME or NAME=VALUE, got "${entry}"`);
    const value = equals < 0 ? process.env[name] : entry.slice(equals + 1);
    if (value !== undefined) env[name] = value;
  }
  return { env };
}

async function loadExecutor(values: ServeValues, limits: ToolLimits): Promise<Executor> {
  const paths = await expandToolPaths(values.tools ?? []);
  const options = parseToolOptions(values['tool-options']);
  const permissions = permissionFlags(values);
  const env = envFlags(values);
  const mcpServers = values['mcp-config'] !== undefined ? await readMcpConfig(values['mcp-config']) : undefined;
  try {
    return await createExecutor({
      tools: paths.map((module) => ({ module, options })),
      ...(mcpServers ? { mcpServers } : {}),
      // Passed through as given: the executor knows which tiers exist and says so when one does not.
      ...(values.isolation !== undefined ? { isolation: values.isolation as Isolation } : {}),
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...permissions,
      ...env,
    });
  } catch (error) {
    throw runError(inConfigTerms(inFlagTerms(oneLineMessage(error)), values['mcp-config']), error);
  }
}

function parseToolOptions(json: string | undefined): unknown {
  if (json === undefined) return { root: process.cwd() };
  try {
    return JSON.parse(json);
  } catch (error) {
    throw usageError('serve', `--tool-options is not valid JSON: ${oneLineMessage(error)}`);
  }
}

/** One stderr line per finished call: stdout belongs to the protocol. */
function logCalls(executor: Executor): void {
  executor.subscribe((event) => {
    if (event.type !== 'tool_end') return;
    const ms = Math.round(event.durationMs);
    if (!event.isError) return log(`✓ ${event.toolName} ${ms} ms`);
    const text = event.result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(' ');
    log(`✗ ${event.toolName} ${ms} ms: ${oneLineMessage(text).slice(0, 300)}`);
  });
}

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.on('SIGINT', () => process.exit(130)).on('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });
}

function log(line: string): void {
  process.stderr.write(`toolpool serve: ${line}\n`);
}

