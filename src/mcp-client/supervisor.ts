import type { ElicitHandler } from '../core/elicitation.ts';
import { SdkHttpError, type Tool as McpTool } from '@modelcontextprotocol/client';
import { McpErrors, ToolErrors, errorMessage } from '../core/errors.ts';
import type { RegisteredTool } from '../tools/registered-tool.ts';
import type { RunJob, RunOutcome } from '../core/runner.ts';
import { withSandboxNetHint } from '../isolation/sandbox/sandbox-net-hint.ts';
import type { ToolLimits } from '../core/tool.ts';
import { McpCall, type CallHooks } from './call.ts';
import type { ServerPlan } from './config.ts';
import { McpConnection, closedAtProbe, isTimeout, type Negotiation } from './connection.ts';
import { httpEndpoint, startStdioEndpoint, type Endpoint } from './endpoint.ts';
import { Session } from './session.ts';
import { executorTool, type ToolMapping } from './tools.ts';
import { ToolpoolError } from '../core/error-codes.ts';

export interface SupervisorOptions {
  /** The executor's limits. */
  limits: ToolLimits;
  toolLimits: Readonly<Record<string, ToolLimits>>;
  /** How long a start (spawn, initialize, the first tools/list) and a tools/list may take. */
  loadTimeoutMs: number;
  /** The longest message a started server may send. */
  maxLineBytes: number;
  /** The size of a sandbox's private /tmp. */
  tmpBytes: number;
  /** `createExecutor({ coerceArguments })`; default on. */
  coerceArguments?: boolean;
  /** Told whenever the server's tool list changed. */
  onToolsChanged: () => void;
  /** `createExecutor({ onElicit })`: answers the server's questions (elicitation/create). */
  onElicit?: ElicitHandler;
}

/** Restarts in a row (each after a crash, a kill or a failed start, with no call answered in between) before toolpool gives up on a server. */
export const MAX_RESTARTS_IN_A_ROW = 3;
/** How long a server may take to exit once its stdin is closed, at close(). */
const STOP_GRACE_MS = 1_000;
/** How long a failed start waits to learn whether the server exited by itself (and with what). */
const EXIT_WAIT_MS = 1_000;

/**
 * One configured MCP server over its lifetime: the first start (which
 * createExecutor awaits), the sessions after it, restarts for later calls
 * after a crash or a kill (at most MAX_RESTARTS_IN_A_ROW in a row), and the
 * executor tools made of its tool list, replaced when it announces a change.
 */
export class ServerSupervisor {
  readonly name: string;
  #session: Session | undefined;
  #starting: Promise<Session | string> | undefined;
  /** The endpoint of a start in progress, so close() can end it. */
  #opening: Endpoint | undefined;
  #failures = 0;
  #lastFailure = '';
  #tools: ReadonlyMap<string, RegisteredTool> = new Map();
  #refreshing: Promise<void> | undefined;
  #closed = false;
  /** Calls running on the server now: only then does it keep this process alive. */
  #inFlight = 0;
  /** Tools made of each definition the server listed, by the definition's JSON: an unchanged tool is not compiled again. */
  #made = new Map<string, RegisteredTool>();
  readonly #warned = new Set<string>();
  /**
   * How a start negotiates the revision: `auto` until a server (over stdio)
   * ended at the `server/discover` probe; from then on `initialize` at once.
   */
  #negotiation: Negotiation = 'auto';
  readonly #mapping: ToolMapping;
  readonly #hooks: CallHooks;

  constructor(
    private readonly plan: ServerPlan,
    private readonly options: SupervisorOptions,
  ) {
    this.name = plan.name;
    this.#hooks = {
      answered: () => void (this.#failures = 0),
      refreshed: () => this.#refreshing,
      // A sandboxed server that cannot reach a host says so in its own words; the note names permissions.net.
      ...(plan.kind === 'stdio' && plan.isolation === 'sandbox' ? { finish: withSandboxNetHint } : {}),
      busy: (change) => {
        const before = this.#inFlight;
        this.#inFlight += change;
        if ((before === 0) !== (this.#inFlight === 0)) this.#session?.endpoint.hold(this.#inFlight > 0);
      },
    };
    this.#mapping = {
      server: plan.name,
      limits: { ...options.limits, ...(plan.timeoutMs !== undefined ? { timeoutMs: plan.timeoutMs } : {}) },
      toolLimits: options.toolLimits,
      ...(options.coerceArguments === false ? { coerceArguments: false } : {}),
      needsApproval: plan.needsApproval,
      call: (toolName, job) => this.call(toolName, job),
    };
  }

  /** Its tools as executor tools, by name; a new map after each change. */
  get tools(): ReadonlyMap<string, RegisteredTool> {
    return this.#tools;
  }

  /** The first start; rejects with a message naming the server and what went wrong. */
  async start(): Promise<void> {
    this.#session = await this.#connect();
  }

  /** A list change being applied, if any: callers that must see the new list wait for it. */
  refreshed(): Promise<void> | undefined {
    return this.#refreshing;
  }

  /** Not async on the way of a running server: a trivial call pays for no extra promise here. */
  call(toolName: string, job: RunJob): Promise<RunOutcome> {
    if (job.signal?.aborted) return Promise.resolve({ ok: false, error: ToolErrors.abortedBeforeStart() });
    if (!this.#closed && this.#session?.usable) return this.#run(this.#session, toolName, job, 0);
    return this.#callAfterStart(toolName, job);
  }

  async #callAfterStart(toolName: string, job: RunJob): Promise<RunOutcome> {
    const handedAt = performance.now();
    const session = await this.#ready(job.signal);
    if (typeof session === 'string') return { ok: false, error: session };
    return this.#run(session, toolName, job, performance.now() - handedAt);
  }

  #run(session: Session, toolName: string, job: RunJob, queuedMs: number): Promise<RunOutcome> {
    return new McpCall(session, this.#hooks, job, queuedMs).run(toolName);
  }

  /** Ends the server and what it started; calls still running end with an error result. Bounded. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#opening?.kill();
    await Promise.all([this.#session?.stop(), this.#starting]);
  }

  /** The session to send a call on: the running one, or a restart; an error text when there is none. */
  async #ready(signal: AbortSignal | undefined): Promise<Session | string> {
    if (this.#closed) return ToolErrors.poolClosed();
    if (this.#session?.usable) return this.#session;
    // One that toolpool killed is over now, though its process may still be on its way out.
    if (this.#session) this.#retire(this.#session);
    if (this.#failures > MAX_RESTARTS_IN_A_ROW) return McpErrors.gaveUp(this.name, this.#failures, this.#lastFailure);
    this.#starting ??= this.#restart();
    return signal ? abortable(this.#starting, signal) : this.#starting;
  }

  async #restart(): Promise<Session | string> {
    try {
      const session = await this.#connect();
      if (this.#closed) {
        await session.stop();
        return ToolErrors.poolClosed();
      }
      this.#session = session;
      return session;
    } catch (error) {
      this.#failures++;
      this.#lastFailure = errorMessage(error).replace(/^createExecutor: /, '');
      return this.#closed ? ToolErrors.poolClosed() : McpErrors.restartFailed(this.name, errorMessage(error));
    } finally {
      this.#starting = undefined;
    }
  }

  /** Starts the server, initializes and lists its tools, all within loadTimeoutMs. */
  async #connect(): Promise<Session> {
    const startedAt = Date.now();
    const remaining = () => Math.max(1, this.options.loadTimeoutMs - (Date.now() - startedAt));
    const endpoint = await this.#openEndpoint();
    this.#opening = endpoint;
    const state: { session?: Session; closed: boolean; changed: boolean; phase: string } = {
      closed: false,
      changed: false,
      phase: 'initialize',
    };
    try {
      const connection = await McpConnection.open(endpoint.transport, {
        timeoutMs: remaining(),
        kind: endpoint.kind,
        negotiation: this.#negotiation,
        onListChanged: () => (state.session ? this.#onListChanged(state.session) : void (state.changed = true)),
        onClose: () => {
          state.closed = true;
          if (state.session) this.#onClosed(state.session);
        },
        ...(this.options.onElicit ? { elicit: { server: this.name, onElicit: this.options.onElicit } } : {}),
      });
      const session = (state.session = new Session(this.name, connection, endpoint));
      state.phase = 'tools/list';
      await this.#setTools(await connection.listTools(remaining()));
      // Caught just below and turned into a start error with a code: a plain Error is enough here.
      if (state.closed) throw new Error('it closed the connection');
      if (state.changed) this.#onListChanged(session);
      endpoint.hold(this.#inFlight > 0);
      return session;
    } catch (error) {
      if (endpoint.kind === 'stdio' && this.#negotiation === 'auto' && closedAtProbe(error)) {
        // Some 2025-era servers exit on any request before initialize: start it again and send initialize first.
        endpoint.kill();
        this.#negotiation = 'legacy';
        return this.#connect();
      }
      const message = await this.#startError(error, endpoint, state.phase);
      endpoint.kill();
      throw new ToolpoolError('TOOLPOOL_ERR_MCP_SERVER', message);
    } finally {
      this.#opening = undefined;
    }
  }

  #openEndpoint(): Promise<Endpoint> | Endpoint {
    const { plan, options } = this;
    if (plan.kind === 'http') return httpEndpoint(plan, options.maxLineBytes);
    return startStdioEndpoint(plan, {
      maxLineBytes: options.maxLineBytes,
      tmpBytes: options.tmpBytes,
      stopGraceMs: STOP_GRACE_MS,
    });
  }

  /** Why a start failed, in words: it exited (code, stderr), it never answered, it wants credentials, or what the SDK said. */
  async #startError(error: unknown, endpoint: Endpoint, phase: string): Promise<string> {
    const timedOut = isTimeout(error);
    if (!timedOut && endpoint.killable) {
      const ended = await Promise.race([endpoint.ended(), delay(EXIT_WAIT_MS)]);
      if (ended !== undefined) return McpErrors.exitedAtStart(this.name, ended, endpoint.stderrTail());
    }
    if (timedOut) return McpErrors.initializeTimedOut(this.name, this.options.loadTimeoutMs, phase);
    if (error instanceof SdkHttpError && (error.status === 401 || error.status === 403) && this.plan.kind === 'http') {
      return McpErrors.refused(this.name, this.plan.url.href, error.status);
    }
    return McpErrors.startFailed(this.name, errorMessage(error));
  }

  /** A session ended by itself (its process exited, its connection closed). */
  #onClosed(session: Session): void {
    session.markClosed();
    if (this.#session === session) this.#retire(session);
  }

  /** The session is over. Unless toolpool closed it, that is a failure: the next call restarts the server. */
  #retire(session: Session): void {
    this.#session = undefined;
    if (session.endedBy === 'closing') return;
    this.#failures++;
    const blocked = session.endedBy === 'blocked';
    void session.endpoint.ended().then((end) => {
      this.#lastFailure = blocked
        ? 'it stopped answering and was killed'
        : `it exited (${end ?? 'its session closed'})`;
    });
  }

  /** `notifications/tools/list_changed`, in the order it arrived: list again, after any list already under way. */
  #onListChanged(session: Session): void {
    const refresh = (this.#refreshing ?? Promise.resolve()).then(() => this.#refresh(session));
    this.#refreshing = refresh;
    void refresh.finally(() => {
      if (this.#refreshing === refresh) this.#refreshing = undefined;
    });
  }

  async #refresh(session: Session): Promise<void> {
    if (session.closed) return;
    try {
      await this.#setTools(await session.connection.listTools(this.options.loadTimeoutMs));
    } catch (error) {
      if (!session.closed) this.#warn(McpErrors.listFailed(this.name, errorMessage(error)));
    }
  }

  async #setTools(tools: readonly McpTool[]): Promise<void> {
    const made = new Map<string, RegisteredTool>();
    const mapped = new Map<string, RegisteredTool>();
    for (const tool of tools) {
      try {
        const definition = JSON.stringify(tool);
        const registered = this.#made.get(definition) ?? (await executorTool(tool, this.#mapping));
        made.set(definition, registered);
        // Caught just below: its text becomes part of the server's tool problem.
        if (mapped.has(registered.info.name)) throw new Error('the server lists two tools of this name');
        mapped.set(registered.info.name, registered);
      } catch (error) {
        this.#warn(McpErrors.toolSkipped(this.name, String(tool.name), errorMessage(error)));
      }
    }
    this.#made = made;
    this.#tools = mapped;
    this.options.onToolsChanged();
  }

  /** Each warning once per server: a list that changes often would repeat it. */
  #warn(text: string): void {
    if (this.#warned.has(text)) return;
    this.#warned.add(text);
    process.emitWarning(text, 'ToolpoolWarning');
  }
}

/** `promise`, or `abortedBeforeStart` once `signal` fires: a call waiting for its server's restart is given up by its own abort. */
function abortable(promise: Promise<Session | string>, signal: AbortSignal): Promise<Session | string> {
  if (signal.aborted) return Promise.resolve(ToolErrors.abortedBeforeStart());
  return new Promise((resolve) => {
    const onAbort = () => resolve(ToolErrors.abortedBeforeStart());
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then((value) => {
      signal.removeEventListener('abort', onAbort);
      resolve(value);
    });
  });
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}
