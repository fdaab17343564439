import { AdapterErrors } from '../errors.ts';
import { createExecutor, type Executor } from '../executor.ts';
import type { Isolation } from '../tool.ts';
import { helpFlag, integerFlag } from './args.ts';
import { inFlagTerms, parseFlags } from './flags.ts';
import { oneLineMessage, runError, usageError } from './errors.ts';
import { expandToolPaths } from './tool-paths.ts';

export const serveHelp = `Usage: toolpool serve --tools <file|folder>... [--http <port>] [options]

Serves tools to MCP clients (Claude Desktop, Claude Code, Cursor, the MCP
Inspector). Every call runs through toolpool: validation and coercion,
limits, isolation; progress becomes MCP progress notifications, and a
cancelled call is stopped (killed after its grace period if it ignores its
signal). Speaks MCP on stdin/stdout by default; logs go to stderr.

Options:
  -t, --tools <file|folder>   Tool modules (default export made with defineTool); a folder loads
                              its .ts/.mts/.js/.mjs files and its subfolders' (not _names or lib/;
                              helpers without a tool export are skipped). Repeatable or comma-separated.
      --http <port>           Serve Streamable HTTP on 127.0.0.1:<port> at /mcp instead of stdio
                              (0 picks a free port; the URL is logged)
      --timeout-ms <n>        Time limit per call (default 30000)
      --isolation <tier>      Where tools run: worker (default), process, or sandbox (bubblewrap,
                              the strongest, where available)
      --allow-read <path>     Run tools under the permission model, reading only these paths
                              (repeatable or comma-separated)
      --allow-write <path>    ... and writing only these
      --tool-options <json>   Options for tool modules whose default export is a factory
                              (default {"root": "<current folder>"})
  -h, --help                  Show this help

It stops when stdin closes (stdio) or on SIGINT/SIGTERM, and leaves no workers or child processes.

Example (Claude Code):
  claude mcp add toolpool -- npx toolpool serve --tools ./tools`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags('serve', {
      args: argv,
      strict: true,
      options: {
        ...helpFlag,
        tools: { type: 'string', short: 't', multiple: true },
        http: { type: 'string' },
        'timeout-ms': { type: 'string' },
        isolation: { type: 'string' },
        'allow-read': { type: 'string', multiple: true },
        'allow-write': { type: 'string', multiple: true },
        'tool-options': { type: 'string' },
      },
    });
  if (values.help) {
    process.stdout.write(`${serveHelp}\n`);
    return 0;
  }
  if (!values.tools?.length) throw usageError('serve', 'missing --tools <file|folder>');
  const port = integerFlag('serve', 'http', values.http, 0);
  if (port !== undefined && port > 65_535) throw usageError('serve', `--http must be a port number (0-65535), got "${values.http}"`);
  const timeoutMs = integerFlag('serve', 'timeout-ms', values['timeout-ms']);
  // Listen first: a signal while the tools load still ends in a clean stop, and the "ready" line below means it is heard.
  const stopped = stopSignal();
  const mcp = await loadMcp();
  const executor = await loadExecutor(values, timeoutMs);
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
    throw runError(`--http ${port}: cannot listen on 127.0.0.1:${port} (${oneLineMessage(error)})`);
  }
}

/** The MCP parts need @modelcontextprotocol/sdk, an optional peer dependency: say how to get it. */
async function loadMcp() {
  try {
    const [stdio, http] = await Promise.all([import('../adapters/mcp/stdio-host.ts'), import('../adapters/mcp/http-host.ts')]);
    return { stdio, http };
  } catch (error) {
    throw runError(AdapterErrors.mcpSdkMissing(oneLineMessage(error)));
  }
}

interface ServeValues {
  tools?: string[];
  isolation?: string;
  'allow-read'?: string[];
  'allow-write'?: string[];
  'tool-options'?: string;
}

async function loadExecutor(values: ServeValues, timeoutMs: number | undefined): Promise<Executor> {
  const paths = await expandToolPaths(values.tools ?? []);
  const options = parseToolOptions(values['tool-options']);
  const fsRead = splitList(values['allow-read']);
  const fsWrite = splitList(values['allow-write']);
  try {
    return await createExecutor({
      tools: paths.map((module) => ({ module, options })),
      // Passed through as given: the executor knows which tiers exist and says so when one does not.
      ...(values.isolation !== undefined ? { isolation: values.isolation as Isolation } : {}),
      ...(timeoutMs !== undefined ? { limits: { timeoutMs } } : {}),
      ...(fsRead.length || fsWrite.length ? { permissions: { fsRead, fsWrite } } : {}),
    });
  } catch (error) {
    throw runError(inFlagTerms(oneLineMessage(error)));
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

function splitList(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter(Boolean);
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

