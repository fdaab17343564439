import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';

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

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
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

  /** Hands the SDK client a message as if the server had sent it (the router does not see it). */
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}
