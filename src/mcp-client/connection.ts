import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  ListToolsResultSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { toolpoolVersion } from '../core/version.ts';
import { RoutedTransport } from './routed-transport.ts';
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
  /** Sends notifications/cancelled for it and ends `result` with an error at once (a cancelled request gets no answer). */
  cancel(reason: string): void;
  /** The call is over for its caller: its progress, still arriving or not, is dropped from now on. */
  settled(): void;
}

/** tools/list pages read at most: a server that keeps returning a cursor does not hold a start forever. */
const MAX_LIST_PAGES = 100;
/** setTimeout's largest delay; a longer SDK timeout would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

let nextToken = 1;

/**
 * One MCP session with a server, through the SDK's Client (initialize,
 * versions, requests, cancellation, answering the server's pings). Two
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
  #transport: RoutedTransport | undefined;
  /** Progress handlers by token, for calls that have not been answered. */
  readonly #progress = new Map<string, (update: ProgressUpdate) => void>();
  /** The progress token of each call request in flight, by request id, and the other way round. */
  readonly #tokens = new Map<string | number, string>();
  readonly #requests = new Map<string, string | number>();

  private constructor(
    private readonly onListChanged: () => void,
    elicit?: { server: string; onElicit: ElicitHandler },
  ) {
    this.#client = new Client(
      { name: 'toolpool', version: toolpoolVersion() },
      { capabilities: elicit ? ELICITATION_CAPABILITY : {} },
    );
    if (elicit) answerElicitations(this.#client, elicit.server, elicit.onElicit, () => this.#progress.size > 0);
    // The SDK reports oddities here (a late answer to a cancelled request); they are not a call's error.
    this.#client.onerror = () => undefined;
  }

  /**
   * Connects and initializes; rejects when initialize is not answered
   * within `timeoutMs`. `onClose`: the session ended (its server process
   * is gone, or the transport was closed).
   */
  static async open(
    transport: Transport,
    options: {
      timeoutMs: number;
      onListChanged: () => void;
      onClose: () => void;
      /** Answers the server's elicitation/create (the client then declares elicitation). */
      elicit?: { server: string; onElicit: ElicitHandler };
    },
  ): Promise<McpConnection> {
    const connection = new McpConnection(options.onListChanged, options.elicit);
    connection.#client.onclose = options.onClose;
    const routed = new RoutedTransport(transport, {
      incoming: (message) => connection.#incoming(message),
      outgoing: (message) => connection.#outgoing(message),
    });
    connection.#transport = routed;
    await connection.#client.connect(routed, { timeout: timerMs(options.timeoutMs) });
    return connection;
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
        ListToolsResultSchema,
        { timeout: timerMs(timeoutMs) },
      );
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  /**
   * tools/call with a progress token of toolpool's. Cancelling goes around
   * the SDK's AbortSignal option: the SDK adds a listener to that signal and
   * never removes it, which costs a few µs on every call (a tenth of a
   * trivial call) and would pile up on a signal shared by calls.
   */
  callTool(name: string, args: Record<string, unknown>, options: CallOptions): PendingCall {
    const token = `toolpool-${nextToken++}`;
    this.#progress.set(token, options.onProgress);
    const request = {
      method: 'tools/call' as const,
      params: { name, arguments: args, _meta: { progressToken: token } },
    };
    const result = this.#client.request(request, CallToolResultSchema, { timeout: timerMs(options.timeoutMs) });
    return { result, cancel: (reason) => this.#cancel(token, reason), settled: () => this.#forget(token) };
  }

  /** Whether the server answers a ping within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    try {
      await this.#client.ping({ timeout: timerMs(timeoutMs) });
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

  /** notifications/cancelled to the server, and to the SDK client the error answer the server will not send. */
  #cancel(token: string, reason: string): void {
    const id = this.#requests.get(token);
    if (id === undefined) return; // answered already, or never sent
    void this.#client
      .notification({ method: 'notifications/cancelled', params: { requestId: id, reason } })
      .catch(() => undefined);
    this.#transport?.deliver({
      jsonrpc: '2.0',
      id,
      error: { code: ErrorCode.RequestTimeout, message: `cancelled by toolpool: ${reason}` },
    });
  }

  /** A call settled (answered, cancelled or its session closed): nothing more of its progress is relayed. */
  #forget(token: string): void {
    this.#progress.delete(token);
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
      const token = this.#tokens.get(message.id);
      if (token !== undefined) this.#forget(token);
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

function timerMs(ms: number): number {
  return Math.max(1, Math.min(MAX_TIMER_MS, Math.ceil(ms)));
}
