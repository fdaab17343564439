import {
  CHECK_PENDING,
  checkApprovals,
  pendingCallProblem,
  type PendingApproval,
  type PendingCheckable,
} from './approval.ts';
import { BatchRun, checkBatchOptions, checkToolCalls, type BatchOptions, type BatchResult } from './batch.ts';
import { ConfigErrors } from '../core/errors.ts';
import {
  OrderedEmitter,
  type ExecutorEvents,
  type Listener,
  type ToolEvent,
  type ToolsChangedEvent,
} from '../core/events.ts';
import { HookQueue, type AfterToolCallHook, type BeforeToolCallHook } from '../core/hooks.ts';
import { definedLimits } from '../tools/tool-info.ts';
import type { RemoteRunner } from '../core/remote.ts';
import { memoryLedger, type Ledger } from '../core/ledger.ts';
import type { ElicitHandler } from '../core/elicitation.ts';
import { TrustDomains } from '../isolation/trust-domains.ts';
import type { ExecutorOptions, WorkerOptions } from '../core/options.ts';
import { checkExecutorOptions } from '../tools/options-check.ts';
import { PoolSet } from '../isolation/worker/pool-set.ts';
import { loadEntries, registerTools, registerToolsListedFirst, type RegisteredTool } from './registry.ts';
import { toolEnvironment } from '../isolation/common/environment.ts';
import { measurePermissionSupport, type Permissions } from '../isolation/common/permissions.ts';
import { resolveLimits } from '../core/limits.ts';
import { loadMcpTools } from '../mcp-client/load.ts';
import type { ToolSource } from '../tools/tool-source.ts';
import type {
  ApprovalPolicy,
  ExecutionMode,
  HostFunctions,
  Isolation,
  OutputSchema,
  ToolAnnotations,
  ToolCall,
  ToolLimits,
  ToolSchema,
} from '../core/tool.ts';
import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';

export interface Executor {
  /** What to send to a model: `[{ name, description, parameters }]`. */
  readonly definitions: ToolSchema[];
  /** Each tool's `label` (UI metadata) by tool name, for tools that have one; never sent to a model. */
  readonly labels: ReadonlyMap<string, string>;
  /** What clients of the tools (MCP, the AI SDK, UIs) need beyond the definitions, by tool name; never sent to a model. */
  readonly metadata: ReadonlyMap<string, ToolMetadata>;
  subscribe(listener: Listener<ToolEvent>): () => void;
  /**
   * Events about the executor rather than a call: `'tools_changed'` comes
   * after an MCP server announced `notifications/tools/list_changed` and its
   * tools were listed again, when `definitions` already shows the new set
   * (delivered in order, like `subscribe`'s events). Returns the unsubscribe.
   */
  on<K extends keyof ExecutorEvents>(type: K, listener: Listener<ExecutorEvents[K]>): () => void;
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
const asyncDispose: typeof Symbol.asyncDispose =
  Symbol.asyncDispose ?? (Symbol.for('nodejs.asyncDispose') as typeof Symbol.asyncDispose);

/** How toolpool's own commands create an executor, beyond its public options. */
export interface ExecutorStart {
  /**
   * `toolpool serve`: list module tools from the listing cache when their
   * content hash has an entry (listing-cache.ts), without waiting for their
   * workers; each call of such a tool waits for its own describe.
   */
  listFromCache?: boolean;
}

/** What `createExecutor` (src/executor/create-executor.ts, which loads this file on first use) runs. */
export async function createExecutor(options: ExecutorOptions, start: ExecutorStart = {}): Promise<Executor> {
  const checked = checkOptions(options);
  const entries = await loadEntries(options.tools ?? []);
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
  let mcp: ToolSource | undefined;
  try {
    domains.check(checked.isolation);
    // Fail fast, with what to install, when the sandbox tier is asked for and bubblewrap cannot start.
    await domains.ready(checked.isolation);
    // The MCP servers start while the tool modules are read.
    const context = {
      domains,
      limits: checked.limits,
      toolLimits: checked.toolLimits,
      host: checked.host,
      isolation: checked.isolation,
      coerceArguments: checked.coerceArguments,
      ...(options.remote ? { remote: options.remote } : {}),
    };
    const [tools, servers] = await Promise.allSettled([
      start.listFromCache
        ? registerToolsListedFirst(entries, context)
        : registerTools(entries, context).then((registered) => ({
            tools: registered,
            confirming: undefined,
            late: undefined,
          })),
      options.mcpServers ? loadMcpTools(options.mcpServers, mcpOptions(checked, options.workers)) : undefined,
    ]);
    mcp = servers.status === 'fulfilled' ? servers.value : undefined;
    if (tools.status === 'rejected') throw tools.reason;
    if (servers.status === 'rejected') throw servers.reason;
    let { tools: registered, confirming, late } = tools.value;
    try {
      checkNames(registered, mcp, checked.toolLimits);
    } catch (error) {
      if (!confirming?.size) throw error;
      // Names listed from the cache (which tools can write) may be what is wrong: the workers' own word decides.
      registered = await registerTools(entries, context);
      confirming = undefined;
      late = undefined;
      checkNames(registered, mcp, checked.toolLimits);
    }
    // A tool only listed so far (from the cache, which tools can write) is not taken at its word: its own describe checks the sandbox.
    if ([...registered].some(([name, tool]) => tool.info.isolation === 'sandbox' && !confirming?.has(name)))
      await domains.ready('sandbox');
    return new ToolExecutor(registered, domains, checked, options.remote, mcp, confirming, late);
  } catch (error) {
    await Promise.all([domains.close(), mcp?.close(), options.remote?.close()]);
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
  coerceArguments: boolean;
  beforeToolCall?: BeforeToolCallHook;
  afterToolCall?: AfterToolCallHook;
  ledger: Ledger;
  onElicit?: ElicitHandler;
}

/** The options schema (src/tools/options-schema.ts) checks every option; this only fills in the defaults. */
function checkOptions(options: ExecutorOptions): CheckedOptions {
  checkExecutorOptions(options);
  return {
    toolExecution: options.toolExecution ?? 'parallel',
    isolation: options.isolation ?? 'worker',
    ...(options.permissions !== undefined ? { permissions: options.permissions } : {}),
    limits: definedLimits(options.limits),
    toolLimits: Object.fromEntries(
      Object.entries(options.toolLimits ?? {}).map(([name, limits]) => [name, definedLimits(limits)]),
    ),
    host: options.host ?? {},
    coerceArguments: options.coerceArguments !== false,
    ...(options.beforeToolCall ? { beforeToolCall: options.beforeToolCall } : {}),
    ...(options.afterToolCall ? { afterToolCall: options.afterToolCall } : {}),
    ledger: options.ledger ?? memoryLedger(),
    ...(options.onElicit ? { onElicit: options.onElicit } : {}),
  };
}

/**
 * A tool module's and an MCP server's tool may not share a name; every
 * name in `toolLimits` must be a tool's (a typo would otherwise leave a
 * tool with limits the host did not mean).
 */
function checkNames(
  tools: ReadonlyMap<string, RegisteredTool>,
  mcp: ToolSource | undefined,
  toolLimits: Readonly<Record<string, ToolLimits>>,
): void {
  for (const [name, tool] of mcp?.tools ?? []) {
    const own = tools.get(name);
    if (own)
      throw new ToolpoolError('TOOLPOOL_ERR_DUPLICATE_TOOL', ConfigErrors.duplicateName(name, own.source, tool.source));
  }
  const known = [...tools.keys(), ...(mcp?.tools.keys() ?? [])];
  const unknown = Object.keys(toolLimits).filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.unknownToolLimits(unknown, known));
}

/** What the MCP client takes from the executor's options. */
function mcpOptions(checked: CheckedOptions, workers: WorkerOptions | undefined) {
  const largestResult = Math.max(
    ...[checked.limits, ...Object.values(checked.toolLimits)].map((limits) => resolveLimits(limits, {}).maxResultBytes),
  );
  return {
    limits: checked.limits,
    toolLimits: checked.toolLimits,
    loadTimeoutMs: workers?.loadTimeoutMs ?? PoolSet.defaults().loadTimeoutMs,
    // A result of maxResultBytes, with room for JSON-RPC around it (and JSON's escapes).
    maxLineBytes: 2 * largestResult + MCP_LINE_MARGIN_BYTES,
    tmpBytes: resolveLimits(checked.limits, {}).maxMemoryMb * 1024 * 1024,
    coerceArguments: checked.coerceArguments,
    ...(checked.onElicit ? { onElicit: checked.onElicit } : {}),
  };
}

const MCP_LINE_MARGIN_BYTES = 1 << 20;

function workerCounts(workers: WorkerOptions | undefined) {
  const counts: { minWorkers?: number; maxWorkers?: number; idleTimeoutMs?: number; loadTimeoutMs?: number } = {};
  if (workers?.min !== undefined) counts.minWorkers = workers.min;
  if (workers?.max !== undefined) counts.maxWorkers = workers.max;
  if (workers?.idleTimeoutMs !== undefined) counts.idleTimeoutMs = workers.idleTimeoutMs;
  if (workers?.loadTimeoutMs !== undefined) counts.loadTimeoutMs = workers.loadTimeoutMs;
  return counts;
}

/** The executor's tools at one moment, and what is shown of them. */
interface ToolView {
  /** The tool source's version this view was made from. */
  version: number;
  /** The executor's own version (listed tools confirmed) this view was made from. */
  ownVersion: number;
  tools: ReadonlyMap<string, RegisteredTool>;
  definitions: ToolSchema[];
  labels: ReadonlyMap<string, string>;
  metadata: ReadonlyMap<string, ToolMetadata>;
}

class ToolExecutor implements Executor, PendingCheckable {
  readonly #events = new OrderedEmitter<ToolEvent>();
  readonly #hooks = new HookQueue();
  readonly #toolsChanged = new OrderedEmitter<ToolsChangedEvent>();
  #view: ToolView;
  #closed = false;
  /** Each tool's definition as last announced, to say what a list change changed. */
  #announced: ReadonlyMap<string, string>;
  #stopWatching: (() => void) | undefined;

  constructor(
    private readonly tools: Map<string, RegisteredTool>,
    private readonly domains: TrustDomains,
    private readonly options: CheckedOptions,
    private readonly remote: RemoteRunner | undefined,
    /** Tools whose list can change (MCP servers'): the view is made again when it does. */
    private readonly source?: ToolSource,
    /** Tools listed from the listing cache (`toolpool serve`), by name: their own describe, which swaps them for the tool it read. */
    confirming?: ReadonlyMap<string, Promise<RegisteredTool>>,
    /** Modules the listing cache said hold no tool, described all the same: a tool one holds is added when found. */
    late?: readonly Promise<RegisteredTool | undefined>[],
  ) {
    for (const found of late ?? [])
      void found.then((tool) => {
        if (!tool || this.#closed || this.tools.has(tool.info.name) || this.source?.tools.has(tool.info.name)) return;
        this.tools.set(tool.info.name, tool);
        this.#ownVersion++;
        this.#announceChange();
      });
    for (const [name, describing] of confirming ?? []) {
      this.#confirming.set(
        name,
        describing.then((tool) => {
          this.tools.set(name, tool);
          this.#confirming.delete(name);
          this.#ownVersion++;
        }),
      );
    }
    this.#view = this.#makeView();
    // Only a tool source (MCP servers) changes the list after creation: without one there is nothing to compare.
    this.#announced = source ? announcedTools(this.#view) : new Map();
    this.#stopWatching = source?.onChange(() => this.#announceChange());
  }

  /** Listed tools whose describe is still running: a call of one waits for it. */
  readonly #confirming = new Map<string, Promise<void>>();
  #ownVersion = 0;

  /** What a call of these tools waits for first: the describe of those only listed so far. */
  #confirmed(calls: readonly ToolCall[]): Promise<unknown> | undefined {
    // The common case, on every batch: nothing listed is still being read.
    if (this.#confirming.size === 0) return undefined;
    const waiting = [...new Set(calls.map((call) => call.name))].flatMap((name) => this.#confirming.get(name) ?? []);
    return waiting.length > 0 ? Promise.all(waiting) : undefined;
  }

  // Live: an MCP server's tools/list_changed shows here (the Agent reads the definitions every turn).
  get definitions(): ToolSchema[] {
    return this.#current().definitions;
  }

  get labels(): ReadonlyMap<string, string> {
    return this.#current().labels;
  }

  get metadata(): ReadonlyMap<string, ToolMetadata> {
    return this.#current().metadata;
  }

  subscribe(listener: Listener<ToolEvent>): () => void {
    return this.#events.subscribe(listener);
  }

  on<K extends keyof ExecutorEvents>(type: K, listener: Listener<ExecutorEvents[K]>): () => void {
    if (type !== 'tools_changed')
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        ConfigErrors.unknownExecutorEvent(String(type), ['tools_changed']),
      );
    return this.#toolsChanged.subscribe(listener);
  }

  /** The source's tools changed: say which executor tools came, went or changed, if any did. */
  #announceChange(): void {
    if (this.#closed) return;
    const now = announcedTools(this.#current());
    const before = this.#announced;
    this.#announced = now;
    const added = [...now.keys()].filter((name) => !before.has(name));
    const removed = [...before.keys()].filter((name) => !now.has(name));
    const changed = [...now].flatMap(([name, shown]) => (before.has(name) && before.get(name) !== shown ? [name] : []));
    if (added.length + removed.length + changed.length === 0) return;
    void this.#toolsChanged.emit({ type: 'tools_changed', added, removed, changed });
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
    // A tool list change a server announced is in effect before the batch looks up its tools,
    // and a tool listed from the cache is the one its worker described.
    const changing = this.source?.settled();
    const confirming = this.#confirmed(calls);
    return changing || confirming
      ? Promise.all([changing, confirming]).then(() => this.#run(calls, options))
      : this.#run(calls, options);
  }

  #run(calls: ToolCall[], options: BatchOptions): Promise<BatchResult> {
    const environment = {
      tools: this.#current().tools,
      toolExecution: this.options.toolExecution,
      events: this.#events,
      hooks: this.#hooks,
      ...(this.options.beforeToolCall ? { beforeToolCall: this.options.beforeToolCall } : {}),
      ...(this.options.afterToolCall ? { afterToolCall: this.options.afterToolCall } : {}),
      ledger: this.options.ledger,
      ...(this.options.onElicit ? { onElicit: this.options.onElicit } : {}),
    };
    return new BatchRun(environment, calls, options).run();
  }

  async needsApproval(toolCalls: ToolCall[]): Promise<PendingApproval[]> {
    if (this.#closed) throw new ToolpoolError('TOOLPOOL_ERR_CLOSED', ConfigErrors.closed());
    const calls = checkToolCalls(toolCalls);
    await Promise.all([this.source?.settled(), this.#confirmed(calls)]);
    return (await checkApprovals(this.#current().tools, calls, { undecided: 'pause' })).pending;
  }

  /** For `new Agent({ snapshot })`: does a stored pending call match its tool call in the transcript? */
  [CHECK_PENDING](call: ToolCall, entry: PendingApproval): string | undefined {
    return pendingCallProblem(this.#current().tools.get(entry.toolName), call, entry);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopWatching?.();
    await Promise.all([this.domains.close(), this.remote?.close(), this.source?.close()]);
  }

  [asyncDispose](): Promise<void> {
    return this.close();
  }

  #current(): ToolView {
    if ((this.source?.version ?? 0) !== this.#view.version || this.#ownVersion !== this.#view.ownVersion)
      this.#view = this.#makeView();
    return this.#view;
  }

  readonly #shadowed = new Set<string>();

  /** A server that lists a name the executor already has (after a list change; at start it is an error): said once per name. */
  #warnShadowed(name: string, own: string, hidden: string): void {
    if (this.#shadowed.has(name)) return;
    this.#shadowed.add(name);
    process.emitWarning(ConfigErrors.shadowedServerTool(name, own, hidden), 'ToolpoolWarning');
  }

  /** The executor's own tools, then the source's (a name of its own wins: a server cannot shadow a tool module). */
  #makeView(): ToolView {
    let tools: ReadonlyMap<string, RegisteredTool> = this.tools;
    if (this.source) {
      const merged = new Map(this.tools);
      for (const [name, tool] of this.source.tools) {
        const own = merged.get(name);
        if (own === undefined) merged.set(name, tool);
        else this.#warnShadowed(name, own.source, tool.source);
      }
      tools = merged;
    }
    const infos = [...tools.values()].map(({ info }) => info);
    return {
      version: this.source?.version ?? 0,
      ownVersion: this.#ownVersion,
      tools,
      definitions: infos.map((info) => ({
        name: info.name,
        description: info.description,
        parameters: info.parameters,
      })),
      labels: new Map(infos.flatMap((info) => (info.label !== undefined ? [[info.name, info.label] as const] : []))),
      metadata: new Map([...tools.values()].map((tool) => [tool.info.name, toolMetadata(tool)] as const)),
    };
  }
}

/** What a client is shown of each tool (its definition, title and metadata), by name, to compare two tool sets. */
function announcedTools(view: ToolView): ReadonlyMap<string, string> {
  return new Map(
    view.definitions.map((definition) => [
      definition.name,
      JSON.stringify([definition, view.labels.get(definition.name), view.metadata.get(definition.name)]),
    ]),
  );
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
