import { createExecutor, type Executor } from '../executor/executor.ts';
import type { ExecutorOptions } from '../core/options.ts';
import { MIN_MEMORY_MB } from '../core/limits.ts';
import type { Isolation, ToolLimits } from '../core/tool.ts';
import { bareFlagValue, integerFlag, splitList } from './args.ts';
import { oneLineMessage, runError, usageError } from './errors.ts';
import { inFlagTerms } from './flags.ts';
import { inConfigTerms, readMcpConfig } from './mcp-config.ts';
import { expandToolPaths } from './tool-paths.ts';

// The flags that make an executor, shared by the commands that serve tools
// (`toolpool serve`, `toolpool worker`): which tools, their limits, tier,
// permissions, environment and factory options.

/** parseArgs options of these flags. */
export const executorFlags = {
  tools: { type: 'string', short: 't', multiple: true },
  timeout: { type: 'string' },
  'timeout-ms': { type: 'string' },
  memory: { type: 'string' },
  isolation: { type: 'string' },
  'allow-read': { type: 'string', multiple: true },
  'allow-write': { type: 'string', multiple: true },
  'allow-net': { type: 'string', multiple: true },
  env: { type: 'string', multiple: true },
  'tool-options': { type: 'string' },
} as const;

/** Their help lines, as both commands print them: --tools first, then the rest. */
export const toolsFlagHelp = `  -t, --tools <file|folder>   Tool modules (default export made with defineTool); a folder loads
                              its .ts/.mts/.js/.mjs files and its subfolders' (not _names or lib/;
                              helpers without a tool export are skipped). Repeatable or comma-separated.`;
export const executorFlagsHelp = `      --timeout <ms>          Time limit per call (default 30000; --timeout-ms works too)
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
                              (default {"root": "<current folder>"})`;

export interface ExecutorValues {
  tools?: string[];
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

/** `node:util` parseArgs has no optional flag values: `--allow-net` may stand alone, and then allows every host. */
export function withBareAllowNet(argv: string[]): string[] {
  return bareFlagValue(argv, 'allow-net', ANY_HOST);
}

/**
 * Checks the flags at once (a usage error names the flag that is wrong) and
 * returns what loads the executor they describe (a run error names the tool
 * that cannot load). `mcpConfig` (serve's `--mcp-config`) adds the tools of
 * the MCP servers that file lists; then `--tools` may be left out.
 */
export function executorLoader(command: string, values: ExecutorValues, mcpConfig?: string): () => Promise<Executor> {
  const tools = values.tools ?? [];
  if (tools.length === 0 && mcpConfig === undefined) {
    throw usageError(
      command,
      command === 'serve' ? 'missing --tools <file|folder> or --mcp-config <file>' : 'missing --tools <file|folder>',
    );
  }
  const limits = limitFlags(command, values);
  return () => loadExecutor(command, values, tools, limits, mcpConfig);
}

async function loadExecutor(
  command: string,
  values: ExecutorValues,
  tools: string[],
  limits: ToolLimits,
  mcpConfig: string | undefined,
): Promise<Executor> {
  const paths = await expandToolPaths(tools);
  const options = parseToolOptions(command, values['tool-options']);
  const permissions = permissionFlags(values);
  const env = envFlags(command, values);
  const mcpServers = mcpConfig !== undefined ? await readMcpConfig(mcpConfig) : undefined;
  try {
    return await createExecutor(
      {
        tools: paths.map((module) => ({ module, options })),
        ...(mcpServers ? { mcpServers } : {}),
        // Passed through as given: the executor knows which tiers exist and says so when one does not.
        ...(values.isolation !== undefined ? { isolation: values.isolation as Isolation } : {}),
        ...(Object.keys(limits).length > 0 ? { limits } : {}),
        ...permissions,
        ...env,
      },
      // A server is listed at once when its modules are as they were last time; each call waits for its own module.
      { listFromCache: command === 'serve' },
    );
  } catch (error) {
    throw runError(inConfigTerms(inFlagTerms(oneLineMessage(error)), mcpConfig), error);
  }
}

/** `--timeout` (or its older name `--timeout-ms`) and `--memory`, as the executor's limits. */
function limitFlags(command: string, values: ExecutorValues): ToolLimits {
  if (values.timeout !== undefined && values['timeout-ms'] !== undefined) {
    throw usageError(command, '--timeout and --timeout-ms are the same option; give one');
  }
  const timeoutMs =
    values.timeout !== undefined
      ? integerFlag(command, 'timeout', values.timeout)
      : integerFlag(command, 'timeout-ms', values['timeout-ms']);
  const maxMemoryMb = integerFlag(command, 'memory', values.memory, MIN_MEMORY_MB);
  return { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(maxMemoryMb !== undefined ? { maxMemoryMb } : {}) };
}

/**
 * `--allow-read`, `--allow-write` and `--allow-net` as the executor's
 * permissions. Files flags turn the permission model on; `--allow-net` alone
 * changes nothing then (without the model tools reach the network anyway),
 * while a host:port list is the sandbox tier's network permission.
 */
function permissionFlags(values: ExecutorValues): Pick<ExecutorOptions, 'permissions'> {
  const fsRead = splitList(values['allow-read']);
  const fsWrite = splitList(values['allow-write']);
  const hosts = splitList(values['allow-net']);
  const net = hosts.length === 0 ? undefined : hosts.includes(ANY_HOST) ? true : hosts;
  const files = fsRead.length > 0 || fsWrite.length > 0 ? { fsRead, fsWrite } : undefined;
  if (!files && (net === undefined || net === true)) return {};
  return { permissions: { ...files, ...(net !== undefined ? { net } : {}) } };
}

/** `--env NAME` copies a variable from this environment (when it is set), `--env NAME=VALUE` sets one. */
function envFlags(command: string, values: ExecutorValues): Pick<ExecutorOptions, 'env'> {
  if (!values.env?.length) return {};
  const env: Record<string, string> = {};
  for (const entry of values.env) {
    const equals = entry.indexOf('=');
    const name = equals < 0 ? entry : entry.slice(0, equals);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw usageError(command, `--env must be NAME or NAME=VALUE, got "${entry}"`);
    const value = equals < 0 ? process.env[name] : entry.slice(equals + 1);
    if (value !== undefined) env[name] = value;
  }
  return { env };
}

function parseToolOptions(command: string, json: string | undefined): unknown {
  if (json === undefined) return { root: process.cwd() };
  try {
    return JSON.parse(json);
  } catch (error) {
    throw usageError(command, `--tool-options is not valid JSON: ${oneLineMessage(error)}`);
  }
}

/** One stderr line per finished call through `log`, or per failed call only (a worker machine may run thousands a second). */
export function logCalls(executor: Executor, log: (line: string) => void, which: 'all' | 'failures' = 'all'): void {
  executor.subscribe((event) => {
    if (event.type !== 'tool_end') return;
    const ms = Math.round(event.durationMs);
    if (!event.isError) return which === 'all' ? log(`✓ ${event.toolName} ${ms} ms`) : undefined;
    const text = event.result.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(' ');
    log(`✗ ${event.toolName} ${ms} ms: ${oneLineMessage(text).slice(0, 300)}`);
  });
}

/** Resolves on the first SIGINT or SIGTERM; a second one exits at once. */
export function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.on('SIGINT', () => process.exit(130)).on('SIGTERM', () => process.exit(143));
      resolve(signal);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
  });
}
