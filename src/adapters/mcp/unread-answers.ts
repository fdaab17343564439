import type { ServerResponse } from 'node:http';

export interface UnreadBounds {
  /** Bytes written to the response and not yet taken by the client's socket. */
  maxUnsentBytes: number;
  /** How long the socket may stay full (a write waiting for `drain`) before the client counts as gone. */
  maxStalledMs: number;
}

/**
 * One HTTP client shares `serve` with the others: a client that stops
 * reading its answer stream (progress notifications, then the result) must
 * neither grow the host without bound nor hold its calls forever. 16 MiB is
 * far above any answer the bounds on results let through in one go.
 */
export const UNREAD_BOUNDS: UnreadBounds = { maxUnsentBytes: 16 * 1024 * 1024, maxStalledMs: 30_000 };

/**
 * Watches what is written to `response`: past `maxUnsentBytes` waiting for
 * the client, or with the socket full for `maxStalledMs`, the response is
 * destroyed. Its request counts as gone then: a 2026-07-28 call aborts with
 * it, and a 2025 session's stream ends (the SDK drops what it still had for
 * that stream). Writers that wait for `drain` (the SDK 1.x transport) are
 * caught by the stall; writers that do not (serveModern) by the bytes.
 */
export function dropWhenUnread(response: ServerResponse, bounds: UnreadBounds = UNREAD_BOUNDS): void {
  let stalled: NodeJS.Timeout | undefined;
  const drop = () => response.destroy();
  const drained = () => {
    clearTimeout(stalled);
    stalled = undefined;
  };
  const write = response.write;
  response.write = function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
    const accepted = (write as (...a: unknown[]) => boolean).apply(this, args);
    if (response.writableLength > bounds.maxUnsentBytes) drop();
    else if (!accepted && stalled === undefined) {
      stalled = setTimeout(drop, bounds.maxStalledMs);
      stalled.unref();
    }
    return accepted;
  } as ServerResponse['write'];
  response.on('drain', drained).once('close', drained);
}
