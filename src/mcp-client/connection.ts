import {
  Client,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool as McpTool,
  type Transport,
} from '@modelcontextprotocol/client';
import { toolpoolVersion } from '../core/version.ts';
import { RoutedStdioTransport, RoutedTransport } from './routed-transport.ts';
import type { ElicitHandler } from '../core/elicitation.ts';
import { ELICITATION_CAPABILITY, answerElicitations } from './elicitation.ts';

/** A `notifications/progress` of one call, as the server sent it. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

export interface CallOptions {
  /** The SDK's own timeout, a backstop behind toolpool's (the SDK's default would cut every call at 60 s). */
  timeoutMs: number;
  onProgress: (update: ProgressUpdate) => void;
}

/** A call in flight. */
export interface PendingCall {
  readonly result: Promise<CallToolResult>;
  /** Cancels it (the SDK's way for the revision spoken) and ends `result` with an error at once (a cancelled request gets no answer). */
  cancel(reason: string): void;
  /** The call is over for its caller: its progress, still arriving or not, is dropped from now on. */
  settled(): void;
}

/** tools/list pages read at most: a server that keeps returning a cursor does not hold a start forever. */
const MAX_LIST_PAGES = 100;
/** setTimeout's largest delay; a longer SDK timeout would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

let nextToken = 1;

/** How a session reaches its server: a local process's stdio, or a URL. */
export type TransportKind = 'stdio' | 'http';

/**
 * The revision a connection negotiates: `auto` probes with
 * `server/discover` (2026-07-28) and falls back to `initialize` (the 2025
 * revisions) for a server that does not speak it; `legacy` sends
 * `initialize` at once.
 */
export type Negotiation = 'auto' | 'legacy';

/**
 * One MCP session with a server, through the SDK v2's Client (version
 * negotiation: 2026-07-28 with a server that speaks it, the 2025 revisions
 * with one that does not; requests, cancellation, answering the server's
 * pings, its questions in either era). Two
 * things are routed by toolpool itself, in the order they arrive (see
 * RoutedTransport): each call's progress notifications, to that call and
 * only until its result came, and `tools/list_changed`.
 *
 * Tools are listed and called with plain requests rather than the SDK's
 * `listTools`/`callTool`: those compile each tool's outputSchema with the
 * SDK's own Ajv and JavaScript regular expressions, on this thread, from a
 * schema the server chose.
 */
export class McpConnection {
  readonly #client: Client;
  /** Progress handlers by token, for calls that have not been answered. */
  readonly #progress = new Map<string, (update: ProgressUpdate) => void>();
  /** Aborted when the last running call of this server ends (its questions end with it); renewed by the next call. */
  #callsEnded = new AbortController();
  /** The progress token of each call request in flight, by request id, and the other way round. */
  readonly #tokens = new Map<string | number, string>();
  readonly #requests = new Map<string, string | number>();
  /** The way to cancel each call in flight, by progress token. */
  readonly #aborts = new Map<string, AbortController>();

  private constructor(
    private readonly onListChanged: () => void,
    elicit?: { server: string; onElicit: ElicitHandler },
  ) {
    this.#client = new Client(
      { name: 'toolpool', version: toolpoolVersion() },
      { capabilities: elicit ? ELICITATION_CAPABILITY : {} },
    );
    if (elicit)
      answerElicitations(this.#client, elicit.server, elicit.onElicit, {
        running: () => this.#progress.size > 0,
        ended: () => this.#callsEnded.signal,
      });
    // The SDK reports oddities here (a late answer to a cancelled request); they are not a call's error.
    this.#client.onerror = () => undefined;
  }

  /**
   * Connects, negotiates the revision and initializes; rejects (with an
   * error `isTimeout` knows) when that is not done within `timeoutMs`, the
   * probe and a fallback to `initialize` together. `onClose`: the session
   * ended (its server process is gone, or the transport was closed).
   */
  static async open(
    transport: Transport,
    options: {
      timeoutMs: number;
      kind: TransportKind;
      /** Default `auto`. */
      negotiation?: Negotiation;
      onListChanged: () => void;
      onClose: () => void;
      /** Answers the server's elicitation/create (the client then declares elicitation). */
      elicit?: { server: string; onElicit: ElicitHandler };
    },
  ): Promise<McpConnection> {
    const negotiation = options.negotiation ?? 'auto';
    const connection = new McpConnection(options.onListChanged, options.elicit);
    connection.#client.onclose = options.onClose;
    const router = {
      incoming: (message: JSONRPCMessage) => connection.#incoming(message),
      outgoing: (message: JSONRPCMessage) => connection.#outgoing(message),
    };
    const routed =
      options.kind === 'stdio' ? new RoutedStdioTransport(transport, router) : new RoutedTransport(transport, router);
    const timeout = timerMs(options.timeoutMs);
    // On stdio a server that never answers the probe is a 2025-era one: half the time for the probe, and
    // all of it bounded here, so a silent server is told within timeoutMs, not one and a half times it.
    const probe = options.kind === 'stdio' ? { timeoutMs: Math.max(1, Math.ceil(timeout / 2)) } : {};
    connection.#client.setVersionNegotiation({ mode: negotiation, probe });
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout })),
        timeout,
      );
    });
    try {
      await Promise.race([connection.#connect(routed, timeout), deadline]);
    } catch (error) {
      await connection.#client.close().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return connection;
  }

  /**
   * connect; on 2026-07-28 a server's `notifications/tools/list_changed`
   * comes on a `subscriptions/listen` stream only, so one is opened (the
   * router sees what it carries). A server that refuses it still serves.
   */
  async #connect(transport: Transport, timeout: number): Promise<void> {
    const client = this.#client;
    await client.connect(transport, { timeout });
    if (client.getProtocolEra() !== 'modern' || !client.getServerCapabilities()?.tools?.listChanged) return;
    await client.listen({ toolsListChanged: true }, { timeout }).catch(() => undefined);
  }

  /** The revision the session speaks (`2026-07-28`, `2025-11-25`, ...). */
  get protocolVersion(): string | undefined {
    return this.#client.getNegotiatedProtocolVersion();
  }

  /** The server declared tools (a server without them has nothing to list). */
  get hasTools(): boolean {
    return this.#client.getServerCapabilities()?.tools !== undefined;
  }

  /** Every tool the server lists, page by page. */
  async listTools(timeoutMs: number): Promise<McpTool[]> {
    if (!this.hasTools) return [];
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#client.request(
        { method: 'tools/list', params: cursor !== undefined ? { cursor } : {} },
        { timeout: timerMs(timeoutMs) },
      );
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /**
   * tools/call with a progress token of toolpool's, cancelled through a
   * signal of its own: the SDK then cancels as the revision says
   * (`notifications/cancelled`, or on 2026-07-28 over HTTP by closing the
   * request's stream) and ends the request at once.
   */
  callTool(name: string, args: Record<string, unknown>, options: CallOptions): PendingCall {
    const token = `toolpool-${nextToken++}`;
    if (this.#progress.size === 0 && this.#callsEnded.signal.aborted) this.#callsEnded = new AbortController();
    this.#progress.set(token, options.onProgress);
    const abort = new AbortController();
    this.#aborts.set(token, abort);
    const request = {
      method: 'tools/call' as const,
      params: { name, arguments: args, _meta: { progressToken: token } },
    };
    const result = this.#client.request(request, { timeout: timerMs(options.timeoutMs), signal: abort.signal });
    return { result, cancel: (reason) => this.#cancel(token, reason), settled: () => this.#forget(token) };
  }

  /** The session speaks 2026-07-28 (or a later revision). */
  get modern(): boolean {
    return this.#client.getProtocolEra() === 'modern';
  }

  /**
   * Whether the server answers within `timeoutMs`: a ping, or on 2026-07-28
   * (which has no ping) `server/discover`, which a server answers at any time.
   */
  async ping(timeoutMs: number): Promise<boolean> {
    try {
      const options = { timeout: timerMs(timeoutMs) };
      await (this.modern ? this.#client.discover(options) : this.#client.ping(options));
      return true;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.#client.close();
  }

  /** Remembers which request carries which progress token, to stop its progress once it is answered. */
  #outgoing(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return;
    const token = (message.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta?.progressToken;
    if (typeof token !== 'string' || !this.#progress.has(token)) return;
    this.#tokens.set(message.id, token);
    this.#requests.set(token, message.id);
  }

  /** The call's signal: the SDK tells the server and ends the request with an error. */
  #cancel(token: string, reason: string): void {
    if (!this.#requests.has(token)) return; // answered already, or never sent
    this.#aborts.get(token)?.abort(`cancelled by toolpool: ${reason}`);
  }

  /** A call settled (answered, cancelled or its session closed): nothing more of its progress is relayed. */
  #forget(token: string): void {
    if (this.#progress.delete(token) && this.#progress.size === 0) this.#callsEnded.abort();
    this.#aborts.delete(token);
    const id = this.#requests.get(token);
    this.#requests.delete(token);
    if (id !== undefined) this.#tokens.delete(id);
  }

  /** Progress and list changes, handled as they arrive; true for a message the SDK client need not see. */
  #incoming(message: JSONRPCMessage): boolean {
    if ('method' in message && !('id' in message)) {
      if (message.method === 'notifications/progress') {
        this.#relayProgress(message.params);
        return true; // the client has no handler for toolpool's tokens
      }
      if (message.method === 'notifications/tools/list_changed') {
        this.onListChanged();
        return true;
      }
      return false;
    }
    if (!('method' in message) && 'id' in message && message.id !== undefined) {
      // The answer to a call: progress that comes after it is dropped, as a tool's updates after its result are.
      // Not yet on 2026-07-28's input_required (the server asks first): the SDK sends the call again, on a
      // new request id, with the person's answer and the same progress token, and the call runs on.
      const token = this.#tokens.get(message.id);
      if (token === undefined) return false;
      if (asksFirst(message)) this.#tokens.delete(message.id);
      else this.#forget(token);
    }
    return false;
  }

  #relayProgress(params: unknown): void {
    if (typeof params !== 'object' || params === null) return;
    const { progressToken, progress, total, message } = params as Record<string, unknown>;
    if (typeof progressToken !== 'string' || typeof progress !== 'number' || !Number.isFinite(progress)) return;
    const handler = this.#progress.get(progressToken);
    if (!handler) return;
    handler({
      progress,
      ...(typeof total === 'number' && Number.isFinite(total) ? { total } : {}),
      ...(typeof message === 'string' ? { message } : {}),
    });
  }
}

/** A 2026-07-28 `input_required` answer: the server needs the client's input before it answers the call. */
function asksFirst(message: JSONRPCMessage): boolean {
  const { result } = message as { result?: { resultType?: unknown } };
  return typeof result === 'object' && result !== null && result.resultType === 'input_required';
}

/**
 * The server closed the connection while the SDK probed it with
 * `server/discover`: on stdio, the way of 2025-era servers whose SDK ends
 * the process on any request before `initialize`.
 */
export function closedAtProbe(error: unknown): boolean {
  return (
    error instanceof SdkError &&
    error.code === SdkErrorCode.EraNegotiationFailed &&
    error.message.includes('closed during the server/discover probe')
  );
}

/** The SDK's own timeout fired (a request, or the start as a whole). */
export function isTimeout(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
}

function timerMs(ms: number): number {
  return Math.max(1, Math.min(MAX_TIMER_MS, Math.ceil(ms)));
}
