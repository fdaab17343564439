import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { AdapterErrors, errorMessage } from '../../core/errors.ts';
import { ToolpoolError } from '../../core/error-codes.ts';
import { createMcpServer } from './server.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

export interface McpHost {
  /** Resolves when the client went away (stdin closed, stdout broken), with what happened; rejects when the client cannot be served. */
  readonly ended: Promise<string>;
  /** Stops serving: in-flight calls are aborted. Does not close the executor. */
  close(): Promise<void>;
}

/** The `_meta` key by which a 2026-07-28 message claims its revision (the per-request envelope). */
const REVISION_CLAIM = 'io.modelcontextprotocol/protocolVersion';

/**
 * Serves the executor over this process's stdin and stdout (stdout carries
 * only the protocol). The client ends the session by closing our stdin.
 *
 * The client's first message decides the revision for the connection: one
 * that carries the 2026-07-28 envelope (`server/discover`, or a request
 * with `_meta["io.modelcontextprotocol/protocolVersion"]`) is served by the
 * MCP SDK v2's own stdio entry (`serveStdio`, see modern-server.ts),
 * which loads then (only such a client needs it: ~25 ms of a start, on the
 * way to the first tools/list); anything else (an `initialize`, as SDK 1.x
 * clients open) by `createMcpServer` as before.
 */
export async function serveOverStdio(executor: McpExecutor, options: McpServerOptions = {}): Promise<McpHost> {
  let end!: (reason: string) => void;
  let fail!: (error: Error) => void;
  const ended = new Promise<string>((resolve, reject) => ((end = resolve), (fail = reject)));
  // Read by whoever races it (serve.ts); a rejection nobody awaited must not end the process.
  ended.catch(() => undefined);
  const onEnd = () => end('stdin closed');
  // A client that exits while we write makes stdout fail with EPIPE; without a listener that would throw.
  const onStdoutError = (error: Error) => end(`stdout failed (${error.message})`);
  process.stdin.once('end', onEnd).once('close', onEnd);
  process.stdout.on('error', onStdoutError);

  const wire = new StdioServerTransport();
  const channel = new Channel(wire);
  let close: () => Promise<void> = async () => void (await wire.close());
  let closing = false;
  const open = (first: JSONRPCMessage): void => {
    if (hasRevisionClaim(first)) {
      // The channel holds the client's messages until the server connects to it; a close asked for meanwhile wins.
      const serving = serveModern(executor, options, channel, () => closing);
      serving.catch((error: unknown) =>
        fail(new ToolpoolError('TOOLPOOL_ERR_MCP_SERVER', AdapterErrors.cannotServeModern(errorMessage(error)))),
      );
      close = async () => {
        const stop = await serving.catch(() => undefined);
        await (stop ? stop() : wire.close());
      };
    } else {
      const server = createMcpServer(executor, options);
      void server.connect(channel).catch((error: unknown) => channel.onerror?.(error as Error));
      close = () => server.close();
    }
  };
  channel.onFirst = open;
  await wire.start();
  return {
    ended,
    async close() {
      closing = true;
      process.stdin.off('end', onEnd).off('close', onEnd);
      await close();
      // Nothing reads stdin any more; let it stop holding the event loop open.
      process.stdin.destroy();
    },
  };
}

/** A 2026-07-28 connection: the SDK v2's stdio entry over the channel; a change of the tools reaches its listen subscriptions. */
async function serveModern(
  executor: McpExecutor,
  options: McpServerOptions,
  channel: Channel,
  closing: () => boolean,
): Promise<() => Promise<void>> {
  const [{ serveStdio }, { createModernServer }] = await Promise.all([
    import('@modelcontextprotocol/server/stdio'),
    import('./modern-server.ts'),
  ]);
  // Closed while the SDK loaded: no server starts, so no call the client sent meanwhile runs.
  if (closing()) return async () => void (await channel.close());
  const servers = new Set<ModernServer>();
  const handle = serveStdio(
    () => {
      const server = createModernServer(executor, options);
      servers.add(server);
      return server;
    },
    // The opening was modern; a later initialize on the same connection is refused by the entry.
    { legacy: 'reject', transport: channel as never },
  );
  const stop = executor.on?.('tools_changed', () => {
    for (const server of servers) {
      if (server.transport) void server.sendToolListChanged().catch(() => undefined);
    }
  });
  return async () => {
    stop?.();
    await handle.close();
  };
}

function hasRevisionClaim(message: JSONRPCMessage): boolean {
  if (!('method' in message)) return false;
  if (message.method === 'server/discover') return true;
  const meta = (message.params as { _meta?: unknown } | undefined)?._meta;
  return typeof meta === 'object' && meta !== null && REVISION_CLAIM in meta;
}

/**
 * The stdio transport as the server of the connection sees it, once the
 * first message chose that server: messages that arrive before it started
 * wait, in order; sending and closing go straight to stdio.
 */
class Channel implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Told of the first message, before it is delivered; connects a server to this channel. */
  onFirst?: (message: JSONRPCMessage) => void;
  #started = false;
  #waiting: JSONRPCMessage[] = [];

  constructor(private readonly wire: StdioServerTransport) {
    wire.onmessage = (message) => this.#receive(message);
    wire.onclose = () => this.onclose?.();
    wire.onerror = (error) => this.onerror?.(error);
  }

  async start(): Promise<void> {
    this.#started = true;
    for (const message of this.#waiting.splice(0)) this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.wire.send(message);
  }

  close(): Promise<void> {
    return this.wire.close();
  }

  #receive(message: JSONRPCMessage): void {
    const first = this.onFirst;
    if (first) {
      this.onFirst = undefined;
      first(message);
    }
    if (this.#started) this.onmessage?.(message);
    else this.#waiting.push(message);
  }
}
