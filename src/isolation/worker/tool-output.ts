import type { Readable } from 'node:stream';

/**
 * What tool code prints, on its way to this process's stderr: never to its
 * stdout, which a host may use for a protocol (`toolpool serve` speaks MCP
 * there), and each line marked as a tool's, so a tool cannot write lines
 * that read as the host's own log.
 */
export const TOOL_OUTPUT_PREFIX = '[tool] ';

/** A line longer than this is cut into pieces, each marked: a tool that never ends a line cannot make the host buffer it all. */
const MAX_LINE_CHARS = 64 * 1024;

export function forwardToolOutput(source: Readable, prefix = TOOL_OUTPUT_PREFIX, target: NodeJS.WritableStream = process.stderr): void {
  let pending = '';
  source.setEncoding('utf8');
  source.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    while (pending.length > MAX_LINE_CHARS) {
      lines.push(pending.slice(0, MAX_LINE_CHARS));
      pending = pending.slice(MAX_LINE_CHARS);
    }
    if (lines.length > 0) target.write(lines.map((line) => `${prefix}${line}\n`).join(''));
  });
  source.on('end', () => {
    if (pending !== '') target.write(`${prefix}${pending}\n`);
    pending = '';
  });
  source.on('error', () => undefined);
  // A stream unpiped from stdout is paused, and a 'data' listener alone does not resume it.
  source.resume();
}
