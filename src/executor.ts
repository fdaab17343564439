import { CHECK_PENDING, checkApprovals, pendingCallProblem, type PendingApproval, type PendingCheckable } from './approval.ts';
import { BatchRun, checkBatchOptions, checkToolCalls, type BatchOptions, type BatchResult } from './batch.ts';
import { ConfigErrors } from './errors.ts';
import { OrderedEmitter, type Listener, type ToolEvent } from './events.ts';
import { HookQueue, type AfterToolCallHook, type BeforeToolCallHook } from './hooks.ts';
import { definedLimits } from './tool-info.ts';
import type { RemoteRunner } from './remote.ts';
import { TrustDomains } from './domains/trust-domains.ts';
import type { ExecutorOptions, WorkerOptions } from './options.ts';
import { checkExecutorOptions } from './options-schema.ts';
import { PoolSet } from './pool/pool-set.ts';
import { loadEntries, registerTools, type RegisteredTool } from './registry.ts';
import { toolEnvironment } from './isolation/environment.ts';
import { measurePermissionSupport, type Permissions } from './isolation/permissions.ts';
import { resolveLimits } from './limits.ts';
import type { ApprovalPolicy, ExecutionMode, HostFunctions, Isolation, OutputSchema, ToolAnnotations, ToolCall, ToolLimits, ToolSchema } from './tool.ts';

export interface Executor {
  /** What to send to a model: `[{ name, description, parameters }]`. */
  readonly definitions: ToolSchema[];
  /** Each tool's `label` (UI metadata) by tool name, for tools that have one; never sent to a model. */
  readonly labels: ReadonlyMap<string, string>;
  /** What clients of the tools (MCP, the AI SDK, UIs) need beyond the definitions, by tool name; never sent to a model. */
  readonly metadata: ReadonlyMap<string, ToolMetadata>;
  subscribe(listener: Listener<ToolEvent>): () => void;
  executeBatch(toolCalls: ToolCall[], options?: BatchOptions): Promise<BatchResult>;
  /**
   * The calls among `toolCalls` that would wait for a person's approval,
   * with the validated arguments they would run with. Runs no tool: only
   * what the approval gate of `executeBatch` runs (`prepareArguments`,
   * validation, a `needsApproval` function). A call that would fail anyway,
   * or whose `needsApproval` function fails, is not listed: running it
   * gives its error result.
   */
  needsApproval(toolCalls: ToolCall[]): Promise<PendingApproval[]>;
  /** Stops the workers and child processes; calls still running end with an error result. Idempotent. */
  close(): Promise<void>;
  /** `close()`, so that `await using executor = await createExecutor(...)` closes it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** A tool's metadata, as `executor.metadata` gives it. */
export interface ToolMetadata {
  /** MCP tool hints from `defineTool({ annotations })`. */
  annotations?: ToolAnnotations;
  /** The JSON Schema of the result's details, from `defineTool({ outputSchema })`; results are checked against it. */
  outputSchema?: OutputSchema;
  /** Whether calls need a person's approval: `'never'`, `'always'`, or `'function'` (the tool's `needsApproval(args)` decides per call). */
  needsApproval: ApprovalPolicy;
  /** A module tool's tier: the executor's `isolation`, or a stronger one the tool asked for. Inline tools (on the host thread) have none. */
  isolation?: Isolation;
  /**
   * A module tool's content hash: its source and the files it imports of
   * its own, not where they are (packages are not part of it). Two
   * machines with the same module give the same hash; `toolpool/bullmq`
   * refuses a call whose host has another version.
   */
  moduleHash?: string;
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
  // Whether workers are confined by the permission flags on this line is measured once, before any tool is placed.
  const permissionSupport = checked.permissions ? await measurePermissionSupport() : undefined;
  const domains = new TrustDomains({
    ...(permissionSupport ? { permissionSupport } : {}),
    ...PoolSet.defaults(),
    ...workerCounts(options.workers),
    env: toolEnvironment(options.env),
    ...(checked.permissions ? { permissions: checked.permissions } : {}),
    hostFunctions: checked.host,
    defaultMemoryMb: resolveLimits(checked.limits, {}).maxMemoryMb,
  });
  try {
    domains.check(checked.isolation);
    // Fail fast, with what to install, when the sandbox tier is asked for and bubblewrap cannot start.
    await domains.ready(checked.isolation);
    const tools = await registerTools(entries, {
      domains,
      limits: checked.limits,
      toolLimits: checked.toolLimits,
      host: checked.host,
      isolation: checked.isolation,
      ...(options.remote ? { remote: options.remote } : {}),
    });
    checkToolLimitNames(checked.toolLimits, tools);
    if ([...tools.values()].some((tool) => tool.info.isolation === 'sandbox')) await domains.ready('sandbox');
    return new ToolExecutor(tools, domains, checked, options.remote);
  } catch (error) {
    await Promise.all([domains.close(), options.remote?.close()]);
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

class ToolExecutor implements Executor, PendingCheckable {
  readonly definitions: ToolSchema[];
  readonly labels: ReadonlyMap<string, string>;
  readonly metadata: ReadonlyMap<string, ToolMetadata>;
  readonly #events = new OrderedEmitter<ToolEvent>();
  readonly #hooks = new HookQueue();
  #closed = false;

  constructor(
    private readonly tools: Map<string, RegisteredTool>,
    private readonly domains: TrustDomains,
    private readonly options: CheckedOptions,
    private readonly remote: RemoteRunner | undefined,
  ) {
    this.definitions = [...tools.values()].map(({ info }) => ({
      name: info.name,
      description: info.description,
      parameters: info.parameters,
    }));
    this.labels = new Map([...tools.values()].flatMap(({ info }) => (info.label !== undefined ? [[info.name, info.label] as const] : [])));
    this.metadata = new Map([...tools.values()].map((tool) => [tool.info.name, toolMetadata(tool)] as const));
  }

  subscribe(listener: Listener<ToolEvent>): () => void {
    return this.#events.subscribe(listener);
  }

  executeBatch(toolCalls: ToolCall[], options: BatchOptions = {}): Promise<BatchResult> {
    if (this.#closed) return Promise.reject(new Error(ConfigErrors.closed()));
    let calls: ToolCall[];
    try {
      calls = checkToolCalls(toolCalls);
      checkBatchOptions(options);
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

  async needsApproval(toolCalls: ToolCall[]): Promise<PendingApproval[]> {
    if (this.#closed) throw new Error(ConfigErrors.closed());
    return (await checkApprovals(this.tools, checkToolCalls(toolCalls), { undecided: 'pause' })).pending;
  }

  /** For `new Agent({ snapshot })`: does a stored pending call match its tool call in the transcript? */
  [CHECK_PENDING](call: ToolCall, entry: PendingApproval): string | undefined {
    return pendingCallProblem(this.tools.get(entry.toolName), call, entry);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([this.domains.close(), this.remote?.close()]);
  }

  [asyncDispose](): Promise<void> {
    return this.close();
  }
}

function toolMetadata({ info, isolation, moduleHash }: RegisteredTool): ToolMetadata {
  return {
    ...(info.annotations !== undefined ? { annotations: info.annotations } : {}),
    ...(info.outputSchema !== undefined ? { outputSchema: info.outputSchema } : {}),
    needsApproval: info.needsApproval ?? 'never',
    ...(isolation !== undefined ? { isolation } : {}),
    ...(moduleHash !== undefined ? { moduleHash } : {}),
  };
}
