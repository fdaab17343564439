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
 * `notifications/progress` for `token`: `progress` counts the updates
 * (it must grow with each one), `message` is the update's text, or its
 * `details.message`, or its `details.percent` as "42%".
 */
export function progressListener(token: ProgressToken, send: SendProgress): Listener<ToolEvent> {
  let count = 0;
  return (event) => {
    if (event.type !== 'tool_update') return;
    const message = progressMessage(event.partial);
    const notification: ProgressNotification = {
      method: 'notifications/progress',
      params: { progressToken: token, progress: ++count, ...(message !== undefined ? { message } : {}) },
    };
    return settleWithin(send(notification), NOTIFICATION_WAIT_MS);
  };
}

export function progressMessage(partial: ToolResult): string | undefined {
  const text = partial.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  if (text !== '') return text;
  const details = partial.details;
  if (typeof details === 'string' && details !== '') return details;
  if (typeof details !== 'object' || details === null) return undefined;
  const { message, percent } = details as { message?: unknown; percent?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (typeof percent === 'number' && Number.isFinite(percent)) return `${percent}%`;
  return undefined;
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
