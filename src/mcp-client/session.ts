import type { McpConnection } from './connection.ts';
import type { Endpoint } from './endpoint.ts';

/** Why toolpool ended a session itself. */
export type EndedBy = 'blocked' | 'closing';

/**
 * One running session with a server: the connection, how it reaches the
 * server, and whether (and why) it ended. A restart makes a new session;
 * calls hold on to the one they were sent on, so what they report is about
 * that one.
 */
export class Session {
  #endedBy: EndedBy | undefined;
  #closed = false;

  constructor(
    readonly server: string,
    readonly connection: McpConnection,
    readonly endpoint: Endpoint,
  ) {}

  /** The session ended (its process is gone, or its transport closed). */
  get closed(): boolean {
    return this.#closed;
  }

  markClosed(): void {
    this.#closed = true;
  }

  get endedBy(): EndedBy | undefined {
    return this.#endedBy;
  }

  /** Calls may be sent on it: it neither ended nor is being ended. */
  get usable(): boolean {
    return !this.#closed && this.#endedBy === undefined;
  }

  /** Ends it at once: kills the server (a remote one: drops the session). */
  kill(why: EndedBy): void {
    this.#endedBy ??= why;
    this.endpoint.kill();
  }

  /** Ends it politely (stdin closed, or the HTTP session deleted), then by force; bounded. */
  async stop(): Promise<void> {
    this.#endedBy ??= 'closing';
    await this.endpoint.stop();
    await this.connection.close().catch(() => undefined);
  }
}
