import { BatchRun, checkToolCalls, type BatchOptions, type BatchResult } from './batch.ts';
import { ConfigErrors } from './errors.ts';
import { OrderedEmitter, type Listener, type ToolEvent } from './events.ts';
import { HookQueue, type AfterToolCallHook, type BeforeToolCallHook } from './hooks.ts';
import { definedLimits } from './tool-info.ts';
import { checkExecutorOptions } from './options-schema.ts';
import { PoolSet } from './pool/pool-set.ts';
import { loadEntries, registerTools, type RegisteredTool, type ToolEntry } from './registry.ts';
import { toolEnvironment, type EnvOption } from './isolation/environment.ts';
import type { Permissions } from './isolation/permissions.ts';
import { Tiers } from './isolation/tiers.ts';
import { resolveLimits } from './limits.ts';
import type { ExecutionMode, HostFunctions, Isolation, ToolCall, ToolLimits, ToolSchema } from './tool.ts';

export interface WorkerOptions {
  /** Workers kept alive when idle (default 1). */
  min?: number;
  /** Workers per pool at most (default: the number of CPUs, at least 2). */
  max?: number;
  /** How long a worker above `min` may sit idle before it is stopped (default 30 s). */
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
   */
  tools: readonly ToolEntry[];
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
  /** Where module tools run: `'worker'` threads (default), worker threads of a child `'process'`, or that child inside a bubblewrap `'sandbox'` (Linux). A tool may ask for its own. */
  isolation?: Isolation;
  /** Opt-in: run module tools under Node's permission model, with file access only to these paths. */
  permissions?: Permissions;
  /** What tools see of the host environment: variable names to copy, or exact values. Default: nothing. */
  env?: EnvOption;
}

export interface Executor {
  /** What to send to a model: `[{ name, description, parameters }]`. */
  readonly definitions: ToolSchema[];
  /** Each tool's `label` (UI metadata) by tool name, for tools that have one; never sent to a model. */
  readonly labels: ReadonlyMap<string, string>;
  subscribe(listener: Listener<ToolEvent>): () => void;
  executeBatch(toolCalls: ToolCall[], options?: BatchOptions): Promise<BatchResult>;
  /** Stops the workers and child processes; calls still running end with an error result. Idempotent. */
  close(): Promise<void>;
  /** `close()`, so that `await using executor = await createExecutor(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * `Symbol.asyncDispose`: Node 20.4+ define it (as `Symbol.for('nodejs.asyncDispose')`
 * until the language's own arrived); the fallback is that same symbol, so
 * `await using` finds the method on any runtime without a polyfill.
 */
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose ?? (Symbol.for('nodejs.asyncDispose') as typeof Symbol.asyncDispose);

/**
 * Loads the tools (module tools are described inside a worker), compiles
 * each schema once and returns an executor. Rejects with a message naming
 * the module and the problem when a tool cannot be loaded.
 */
export async function createExecutor(options: ExecutorOptions): Promise<Executor> {
  const checked = await checkOptions(options);
  const entries = await loadEntries(options.tools);
  const tiers = new Tiers({
    ...PoolSet.defaults(),
    ...workerCounts(options.workers),
    env: toolEnvironment(options.env),
    ...(checked.permissions ? { permissions: checked.permissions } : {}),
    hostFunctions: checked.host,
    defaultMemoryMb: resolveLimits(checked.limits, {}).maxMemoryMb,
    moduleFiles: entries.flatMap((entry) => ('module' in entry ? [entry.module.module] : [])),
  });
  try {
    tiers.check(checked.isolation);
    // Fail fast, with what to install, when the sandbox tier is asked for and bubblewrap cannot start.
    await tiers.ready(checked.isolation);
    const tools = await registerTools(entries, {
      tiers,
      limits: checked.limits,
      toolLimits: checked.toolLimits,
      host: checked.host,
      isolation: checked.isolation,
    });
    checkToolLimitNames(checked.toolLimits, tools);
    if ([...tools.values()].some((tool) => tool.info.isolation === 'sandbox')) await tiers.ready('sandbox');
    return new ToolExecutor(tools, tiers, checked);
  } catch (error) {
    await tiers.close();
    throw error;
  }
}

interface CheckedOptions {
  toolExecution: ExecutionMode;
  isolation: Isolation;
  permissions?: Permissions;
  limits: ToolLimits;
  toolLimits: Readonly<Record<string, ToolLimits>>;
  host: HostFunctions;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
}

/** The options schema (src/options-schema.ts) checks every option; this only fills in the defaults. */
async function checkOptions(options: ExecutorOptions): Promise<CheckedOptions> {
  await checkExecutorOptions(options);
  return {
    toolExecution: options.toolExecution ?? 'parallel',
    isolation: options.isolation ?? 'worker',
    ...(options.permissions !== undefined ? { permissions: options.permissions } : {}),
    limits: definedLimits(options.limits),
    toolLimits: Object.fromEntries(Object.entries(options.toolLimits ?? {}).map(([name, limits]) => [name, definedLimits(limits)])),
    host: options.host ?? {},
    ...(options.beforeToolCall ? { beforeToolCall: options.beforeToolCall } : {}),
    ...(options.afterToolCall ? { afterToolCall: options.afterToolCall } : {}),
  };
}

/** Every name in `toolLimits` must be a tool's: a typo would otherwise leave a tool with limits the host did not mean. */
function checkToolLimitNames(toolLimits: Readonly<Record<string, ToolLimits>>, tools: ReadonlyMap<string, RegisteredTool>): void {
  const unknown = Object.keys(toolLimits).filter((name) => !tools.has(name));
  if (unknown.length > 0) throw new Error(ConfigErrors.unknownToolLimits(unknown, [...tools.keys()]));
}

function workerCounts(workers: WorkerOptions | undefined) {
  const counts: { minWorkers?: number; maxWorkers?: number; idleTimeoutMs?: number; loadTimeoutMs?: number } = {};
  if (workers?.min !== undefined) counts.minWorkers = workers.min;
  if (workers?.max !== undefined) counts.maxWorkers = workers.max;
  if (workers?.idleTimeoutMs !== undefined) counts.idleTimeoutMs = workers.idleTimeoutMs;
  if (workers?.loadTimeoutMs !== undefined) counts.loadTimeoutMs = workers.loadTimeoutMs;
  return counts;
}

class ToolExecutor implements Executor {
  readonly definitions: ToolSchema[];
  readonly labels: ReadonlyMap<string, string>;
  readonly #events = new OrderedEmitter<ToolEvent>();
  readonly #hooks = new HookQueue();
  #closed = false;

  constructor(
    private readonly tools: Map<string, RegisteredTool>,
    private readonly tiers: Tiers,
    private readonly options: CheckedOptions,
  ) {
    this.definitions = [...tools.values()].map(({ info }) => ({
      name: info.name,
      description: info.description,
      parameters: info.parameters,
    }));
    this.labels = new Map([...tools.values()].flatMap(({ info }) => (info.label !== undefined ? [[info.name, info.label] as const] : [])));
  }

  subscribe(listener: Listener<ToolEvent>): () => void {
    return this.#events.subscribe(listener);
  }

  executeBatch(toolCalls: ToolCall[], options: BatchOptions = {}): Promise<BatchResult> {
    if (this.#closed) return Promise.reject(new Error(ConfigErrors.closed()));
    let calls: ToolCall[];
    try {
      calls = checkToolCalls(toolCalls);
    } catch (error) {
      return Promise.reject(error);
    }
    const environment = {
      tools: this.tools,
      toolExecution: this.options.toolExecution,
      events: this.#events,
      hooks: this.#hooks,
      ...(this.options.beforeToolCall ? { beforeToolCall: this.options.beforeToolCall } : {}),
      ...(this.options.afterToolCall ? { afterToolCall: this.options.afterToolCall } : {}),
    };
    return new BatchRun(environment, calls, options).run();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.tiers.close();
  }

  [asyncDispose](): Promise<void> {
    return this.close();
  }
}
