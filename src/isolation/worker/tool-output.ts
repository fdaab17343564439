import type { Readable } from 'node:stream';

/**
 * What tool code prints, on its way to this process's stderr: never to its
 * stdout, which a host may use for a protocol (`toolpool serve` speaks MCP
 * there), and each line marked as a tool's, so a tool cannot write lines
 * that read as the host's own log; control characters are escaped, so a
 * line cannot move the cursor back over its mark or drive the terminal.
 */
export const TOOL_OUTPUT_PREFIX = '[tool] ';

/** A line longer than this is cut into pieces, each marked: a tool that never ends a line cannot make the host buffer it all. */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Control characters a terminal acts on: C0 but tab and newline (carriage
 * return, escape: cursor moves, erasing the `[tool]` mark, OSC 52 writes to
 * the clipboard, window titles), DEL, C1 (8-bit CSI and OSC) and the
 * bidirectional overrides that reorder what a line shows.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A line of tool output as inert text: each control character written as its escape (`\x1b`, `\u202e`). */
export function escapeControls(line: string): string {
  return line.replace(CONTROL, (char) => {
    const code = char.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

export function forwardToolOutput(
  source: Readable,
  prefix = TOOL_OUTPUT_PREFIX,
  target: NodeJS.WritableStream = process.stderr,
): void {
  let pending = '';
  source.setEncoding('utf8');
  source.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    while (pending.length > MAX_LINE_CHARS) {
      lines.push(pending.slice(0, MAX_LINE_CHARS));
      pending = pending.slice(MAX_LINE_CHARS);
    }
    if (lines.length > 0) target.write(lines.map((line) => `${prefix}${escapeControls(line)}\n`).join(''));
  });
  source.on('end', () => {
    if (pending !== '') target.write(`${prefix}${escapeControls(pending)}\n`);
    pending = '';
  });
  source.on('error', () => undefined);
  // A stream unpiped from stdout is paused, and a 'data' listener alone does not resume it.
  source.resume();
}
