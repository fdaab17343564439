import type { ProgressNotification, ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import type { Listener, ToolEvent, ToolResult } from '../../index.ts';

/**
 * How long one progress notification may hold up the executor's event
 * chain. The chain is ordered (a `tool_update` is delivered before its
 * `tool_end`), so waiting for the transport keeps notifications ahead of the
 * result; the bound keeps a client that stopped reading from stalling every
 * other call's events.
 */
const NOTIFICATION_WAIT_MS = 1_000;

type SendProgress = (notification: ProgressNotification) => Promise<void>;

/**
 * A batch listener that turns each `tool_update` of the call into a
 * `notifications/progress` for `token`. A tool gives MCP's `progress` and
 * `total` with its update's details: `{ progress, total }` (e.g. files done
 * of files found), or `{ percent }` (progress of a total of 100); an update
 * without them counts one more than the last. MCP wants `progress` to grow
 * with each notification (the first may be 0), so a number that does not
 * grow counts one more than the last instead. A total, once given, goes
 * with every later notification while the progress is within it (a tool
 * that said "0 of 100" and then sends a text update is still "1 of 100").
 * `message` is the update's text, or its `details.message`, or its numbers
 * ("42%", "3/10").
 */
export function progressListener(token: ProgressToken, send: SendProgress): Listener<ToolEvent> {
  let last: number | undefined;
  let total: number | undefined;
  return (event) => {
    if (event.type !== 'tool_update') return;
    const given = progressOf(event.partial);
    const grows = given !== undefined && given.progress >= 0 && (last === undefined || given.progress > last);
    const progress = grows ? given.progress : (last ?? 0) + 1;
    last = progress;
    if (grows && given.total !== undefined) total = given.total;
    if (total !== undefined && progress > total) total = undefined;
    const message = progressMessage(event.partial);
    const notification: ProgressNotification = {
      method: 'notifications/progress',
      params: {
        progressToken: token,
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      },
    };
    return settleWithin(send(notification), NOTIFICATION_WAIT_MS);
  };
}

/** The progress a tool gave in its update's details, if any: `{ progress, total }` or `{ percent }`. */
export function progressOf(partial: ToolResult): { progress: number; total?: number } | undefined {
  const details = partial.details;
  if (typeof details !== 'object' || details === null) return undefined;
  const { progress, total, percent } = details as { progress?: unknown; total?: unknown; percent?: unknown };
  if (isFiniteNumber(progress)) return isFiniteNumber(total) && total > 0 ? { progress, total } : { progress };
  if (isFiniteNumber(percent)) return { progress: percent, total: 100 };
  return undefined;
}

export function progressMessage(partial: ToolResult): string | undefined {
  const text = partial.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  if (text !== '') return text;
  const details = partial.details;
  if (typeof details === 'string' && details !== '') return details;
  if (typeof details !== 'object' || details === null) return undefined;
  const { message, percent } = details as { message?: unknown; percent?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (isFiniteNumber(percent)) return `${percent}%`;
  const given = progressOf(partial);
  if (given?.total !== undefined) return `${given.progress}/${given.total}`;
  return undefined;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects (a gone client is not the tool's failure). */
function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    promise.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });
}
