import { createInterface } from 'node:readline/promises';
import type { ApprovalDecisions } from '../agent/approvals.ts';
import type { PendingApproval } from '../executor/approval.ts';
import type { CallLabels } from './timeline.ts';
import { oneLine, type Output, type Style } from './terminal.ts';

/** What the terminal prompt reads from: stdin, or a stand-in in tests. */
export type Input = NodeJS.ReadableStream & { isTTY?: boolean };

export const REJECTED_AT_TERMINAL = 'The user declined it at the terminal.';

/**
 * Asks about each pending call on the terminal, y/n, with its arguments
 * shown. Anything but y/yes is a no: an unclear answer must not run a
 * call. When the input ends (or `signal` fires), the calls not answered
 * yet are rejected.
 */
export async function askApprovals(
  pending: PendingApproval[],
  input: Input,
  out: Output,
  style: Style,
  labels: CallLabels,
  signal?: AbortSignal,
): Promise<ApprovalDecisions> {
  const approved: string[] = [];
  const rejected: Record<string, string> = {};
  const terminal = createInterface({ input, terminal: false });
  signal?.addEventListener('abort', () => terminal.close(), { once: true });
  const lines = terminal[Symbol.asyncIterator]();
  try {
    for (const call of pending) {
      out.write(`${style.yellow('?')} ${describePending(call, labels, out.columns)}\n  approve? [y/N] `);
      const answer = await lines.next();
      if (!answer.done && /^\s*y(es)?\s*$/i.test(answer.value)) approved.push(call.toolCallId);
      else rejected[call.toolCallId] = REJECTED_AT_TERMINAL;
      if (answer.done) out.write('\n');
    }
  } finally {
    terminal.close();
  }
  return { approved, rejected };
}

/** One line per pending call: its label, id and arguments. */
export function describePending(call: PendingApproval, labels: CallLabels, columns = 100): string {
  const label = labels.of(call.toolCallId, call.toolName);
  return `${label} (${call.toolCallId}) ${oneLine(JSON.stringify(call.args), Math.max(30, columns - label.length - call.toolCallId.length - 8))}`;
}
