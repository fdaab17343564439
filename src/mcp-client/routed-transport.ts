import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client';

/** Sees each message before the SDK client does; returns true for one it handled itself (the client never sees it). */
export type Router = {
  incoming(message: JSONRPCMessage): boolean;
  outgoing(message: JSONRPCMessage): void;
};

/**
 * A transport in front of another one that shows every message to a
 * router first, synchronously, in the order it arrived. The SDK's client
 * runs notification handlers a microtask after it resolves a response, so
 * a progress notification that came just before a result (in the same
 * chunk) would reach its handler after the result, and a
 * `tools/list_changed` sent before a result would be acted on after it;
 * the router sees them in wire order.
 *
 * What the SDK reads of a transport to pick its ways passes through: a
 * stream per request (Streamable HTTP: on 2026-07-28 a call is cancelled by
 * closing its stream), the protocol version for the HTTP headers.
 */
export class RoutedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(
    private readonly inner: Transport,
    private readonly router: Router,
  ) {
    inner.onmessage = (message, extra) => {
      if (!this.router.incoming(message)) this.onmessage?.(message, extra);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.router.outgoing(message);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * The same, over a local process's stdin and stdout. The SDK tells a stdio
 * transport by its `pid` and `stderr` (no class to import): on one, a
 * server that does not answer the `server/discover` probe is a 2025-era
 * server (it gets `initialize`), where over HTTP silence is an outage. It
 * probes in place: the SDK starts a second process only for its own stdio
 * transport, never for this one.
 */
export class RoutedStdioTransport extends RoutedTransport {
  readonly pid = null;
  readonly stderr = null;
}
