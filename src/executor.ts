import { BatchRun, checkToolCalls, type BatchOptions, type BatchResult } from './batch.ts';
import { ConfigErrors } from './errors.ts';
import { OrderedEmitter, type Listener, type ToolEvent } from './events.ts';
import { HookQueue, type AfterToolCallHook, type BeforeToolCallHook } from './hooks.ts';
import { checkLimits } from './tool-info.ts';
import { PoolSet } from './pool/pool-set.ts';
import { loadEntries, registerTools, type RegisteredTool, type ToolEntry } from './registry.ts';
import { toolEnvironment, type EnvOption } from './isolation/environment.ts';
import type { Permissions } from './isolation/permissions.ts';
import { parseNetAllowlist } from './isolation/sandbox/net-allowlist.ts';
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
  /** Module paths or file URLs (run in workers), or inline `defineTool()` objects (run on this thread). */
  tools: readonly ToolEntry[];
  /** `'sequential'` runs every batch one call at a time (S11). Default `'parallel'`. */
  toolExecution?: ExecutionMode;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  /** Host functions tools may call as `ctx.host.name(...)`. */
  host?: HostFunctions;
  /** Defaults for every tool; a tool's own `limits` override them. */
  limits?: ToolLimits;
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
  subscribe(listener: Listener<ToolEvent>): () => void;
  executeBatch(toolCalls: ToolCall[], options?: BatchOptions): Promise<BatchResult>;
  close(): Promise<void>;
}

/**
 * Loads the tools (module tools are described inside a worker), compiles
 * each schema once and returns an executor. Rejects with a message naming
 * the module and the problem when a tool cannot be loaded.
 */
export async function createExecutor(options: ExecutorOptions): Promise<Executor> {
  const checked = checkOptions(options);
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
    const tools = await registerTools(entries, { tiers, limits: checked.limits, host: checked.host, isolation: checked.isolation });
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
  host: HostFunctions;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
}

function checkOptions(options: ExecutorOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(ConfigErrors.badOption('(options)', 'must be an object with a tools array'));
  if (!Array.isArray(options.tools)) throw new TypeError(ConfigErrors.badOption('tools', 'must be an array of module paths, file URLs or defineTool() objects'));
  const toolExecution = options.toolExecution ?? 'parallel';
  if (toolExecution !== 'parallel' && toolExecution !== 'sequential') throw new TypeError(ConfigErrors.badOption('toolExecution', 'must be "parallel" or "sequential"'));
  for (const hook of ['beforeToolCall', 'afterToolCall'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') throw new TypeError(ConfigErrors.badOption(hook, 'must be a function'));
  }
  const host = options.host ?? {};
  for (const [name, fn] of Object.entries(host)) {
    if (typeof fn !== 'function') throw new TypeError(ConfigErrors.badOption(`host.${name}`, 'must be a function'));
  }
  let limits: ToolLimits;
  try {
    limits = checkLimits(options.limits, 'createExecutor: option limits');
  } catch (error) {
    throw new TypeError((error as Error).message);
  }
  const isolation = options.isolation ?? 'worker';
  if (isolation !== 'worker' && isolation !== 'process' && isolation !== 'sandbox') {
    throw new TypeError(ConfigErrors.badOption('isolation', 'must be "worker", "process" or "sandbox"'));
  }
  return {
    toolExecution,
    isolation,
    ...(options.permissions !== undefined ? { permissions: checkPermissions(options.permissions) } : {}),
    limits,
    host,
    ...(options.beforeToolCall ? { beforeToolCall: options.beforeToolCall } : {}),
    ...(options.afterToolCall ? { afterToolCall: options.afterToolCall } : {}),
  };
}

function checkPermissions(permissions: Permissions): Permissions {
  for (const key of ['fsRead', 'fsWrite'] as const) {
    const paths = permissions?.[key];
    if (paths !== undefined && (!Array.isArray(paths) || paths.some((path) => typeof path !== 'string' || path === ''))) {
      throw new TypeError(ConfigErrors.badOption(`permissions.${key}`, 'must be an array of paths'));
    }
  }
  const net = permissions?.net;
  if (net !== undefined && typeof net !== 'boolean' && !Array.isArray(net)) {
    throw new TypeError(ConfigErrors.badOption('permissions.net', "must be true, false, or a list of 'host:port' strings"));
  }
  if (Array.isArray(net)) parseNetAllowlist(net);
  const unknown = Object.keys(permissions ?? {}).filter((key) => key !== 'fsRead' && key !== 'fsWrite' && key !== 'net');
  if (unknown.length > 0) throw new TypeError(ConfigErrors.badOption('permissions', `has unknown keys ${unknown.join(', ')}; use fsRead, fsWrite and net`));
  return permissions;
}

function workerCounts(workers: WorkerOptions | undefined) {
  const counts: { minWorkers?: number; maxWorkers?: number; idleTimeoutMs?: number; loadTimeoutMs?: number } = {};
  const check = (name: string, value: number | undefined, min: number) => {
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || value < min) throw new TypeError(ConfigErrors.badOption(`workers.${name}`, `must be an integer >= ${min}`));
    return value;
  };
  const min = check('min', workers?.min, 0);
  const max = check('max', workers?.max, 1);
  const idle = check('idleTimeoutMs', workers?.idleTimeoutMs, 0);
  const load = check('loadTimeoutMs', workers?.loadTimeoutMs, 1);
  if (min !== undefined) counts.minWorkers = min;
  if (max !== undefined) counts.maxWorkers = max;
  if (idle !== undefined) counts.idleTimeoutMs = idle;
  if (load !== undefined) counts.loadTimeoutMs = load;
  return counts;
}

class ToolExecutor implements Executor {
  readonly definitions: ToolSchema[];
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
}
