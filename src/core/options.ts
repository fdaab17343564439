import type { ElicitHandler } from './elicitation.ts';
import type { AfterToolCallHook, BeforeToolCallHook } from './hooks.ts';
import type { RemoteRunner } from './remote.ts';
import type { Ledger } from './ledger.ts';
import type { McpServerConfig } from './mcp-config.ts';
import type { ExecutionMode, HostFunctions, Isolation, Tool, ToolLimits } from './tool.ts';

// The options of `createExecutor`, as types. They live below both the
// executor and the options schema (src/tools/options-schema.ts), which describes
// each of them once for the runtime check.

/** Opt-in permissions for tool code, enforced by Node's permission model. */
export interface Permissions {
  /** Folders or files tools may read. */
  fsRead?: readonly string[];
  /** Folders or files tools may write. */
  fsWrite?: readonly string[];
  /**
   * Folders of `fsWrite` that every module given them shares, on purpose
   * (sandbox tier). Otherwise each module in the sandbox sees an `fsWrite`
   * folder as a space of its own: on the host
   * `<folder>/.toolpool-modules/<module>-<hash>/`, so two modules never
   * read each other's files. The other tiers do not split `fsWrite`.
   */
  fsWriteShared?: readonly string[];
  /**
   * Network access. `true` allows it, `false` (and leaving it out, on Node
   * 25+) denies it; Node before 25 has no network permission, so `false`
   * is refused there. A `'host:port'` list needs `isolation: 'sandbox'`.
   */
  net?: boolean | readonly string[];
}

/**
 * What tools see as `process.env`. Nothing of the host's environment by
 * default: a secret in the host's environment must be invisible to a tool.
 * A list of names copies those variables from the host; an object gives
 * exact values.
 */
export type EnvOption = readonly string[] | Readonly<Record<string, string>>;

/**
 * A tool as `createExecutor({ tools })` accepts it: a module path or file
 * URL (runs in workers), or a folder of them, the same with options for
 * modules whose default export is a factory `(options) => tool`, or an
 * inline `defineTool()` object (runs on this thread).
 */
export type ToolEntry = string | URL | ModuleEntry | Tool;

export interface ModuleEntry {
  module: string | URL;
  /** Structured-cloned into the worker and passed to the module's default export. */
  options?: unknown;
  /**
   * Opt-in sharing, for tool modules you trust as one: every module entry
   * with the same `trustDomain` name shares workers, child processes and
   * sandboxes. Without it each module is a trust domain of its own: no
   * thread or process ever runs code of two modules, so one module can
   * reach only its own calls.
   */
  trustDomain?: string;
}

export interface WorkerOptions {
  /** Workers each tool module's pool keeps while the module is in use (default 1). */
  min?: number;
  /**
   * Worker threads that run tool code at once, across all tool modules
   * (each module has a pool of its own; they share this cap). Default: the
   * number of CPUs, at least 2.
   */
  max?: number;
  /**
   * How long a worker above `min` may sit idle before it is stopped, and a
   * module's whole pool (its workers, its child process) once none of its
   * tools was called for this long (default 30 s). It starts again on the
   * next call.
   */
  idleTimeoutMs?: number;
  /** How long importing a tool module to read its definition may take (default 30 s). */
  loadTimeoutMs?: number;
}

export interface ExecutorOptions {
  /**
   * Module paths or file URLs (run in workers), folders of tool modules, or
   * inline `defineTool()` objects (run on this thread). A folder stands for
   * its `.ts`, `.mts`, `.js` and `.mjs` files and those of its subfolders,
   * except names starting with `_` or `.`, tests, declarations and the
   * folders `lib` and `node_modules`; a module there whose default export is
   * not a tool is skipped (one warning names them), any other failure to
   * load fails `createExecutor` as for a module named on its own.
   * Optional when `mcpServers` gives the tools.
   */
  tools?: readonly ToolEntry[];
  /**
   * MCP servers whose tools become the executor's: each tool `t` of server
   * `NAME` is the tool `NAME_t`. A server with `command` is started by
   * toolpool (in the sandbox tier unless `isolation: 'process'`); one with
   * `url` is reached over Streamable HTTP.
   */
  mcpServers?: Readonly<Record<string, McpServerConfig>>;
  /**
   * Undo the model's common type mistakes where arguments fail their
   * schema: a numeric string for a number or an integer, `"true"`/`"false"`
   * for a boolean, a finite number for a string; nothing else (`null` stays
   * `null`, a boolean never becomes a number). Arguments valid as sent are
   * never changed. `false` runs only values of the schema's own types.
   * Default `true`.
   */
  coerceArguments?: boolean;
  /** `'sequential'` runs every batch one call at a time. Default `'parallel'`. */
  toolExecution?: ExecutionMode;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  /** Host functions tools may call as `ctx.host.name(...)`. */
  host?: HostFunctions;
  /** Defaults for every tool; a tool's own `limits` may only tighten them. */
  limits?: ToolLimits;
  /**
   * The host's own limits for named tools, over `limits`: these may loosen
   * as well as tighten (give one slow tool 5 minutes without giving every
   * tool 5 minutes). A tool's own `limits` still only tighten what is set
   * here. A name no tool has is refused.
   */
  toolLimits?: Readonly<Record<string, ToolLimits>>;
  workers?: WorkerOptions;
  /**
   * Where module tools run: `'worker'` threads (default), worker threads of a child `'process'`, or that child inside a bubblewrap `'sandbox'` (Linux). A tool may ask for its own.
   * The worker tier is fault isolation only, no wall against code written to attack the host (it shares the host's process);
   * for tools you did not write use `'sandbox'`, or `'process'` with `permissions`.
   */
  isolation?: Isolation;
  /** Opt-in: run module tools under Node's permission model, with file access only to these paths. */
  permissions?: Permissions;
  /** What tools see of the host environment: variable names to copy, or exact values. Default: nothing. */
  env?: EnvOption;
  /**
   * Run module tools' `execute` on other machines, e.g. `remoteRunner()`
   * from `toolpool/bullmq`. This executor still reads each definition, runs
   * `prepareArguments`, validation, `needsApproval`, the hooks and the
   * events; inline tools run here as always. The executor closes it.
   */
  remote?: RemoteRunner;
  /**
   * Where calls of batches with a `runId` (every batch of an `Agent`) are
   * recorded, so each runs at most once: `memoryLedger()` (the default, this
   * process), `sqliteLedger(path)` (one machine), `redisLedger()` from
   * `toolpool/bullmq` (many machines) or your own `Ledger`. The executor
   * does not close it.
   */
  ledger?: Ledger;
  /**
   * Answers a tool's `ctx.elicit` questions (MCP elicitation's shapes):
   * `(request, { toolName, callId, signal }) => ({ action, content? })`.
   * The signal fires when the call is stopped or ends. With `mcpServers`,
   * it also answers the servers' `elicitation/create` requests. Without it,
   * `ctx.elicit` rejects. See docs/elicitation.md.
   */
  onElicit?: ElicitHandler;
}
