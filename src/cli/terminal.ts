/**
 * Output helpers for the CLI: colours (only on a terminal, never with
 * NO_COLOR), one-line truncation, progress bars, and a live region at the
 * bottom of the terminal that is redrawn in place while lines scroll above it.
 */

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface Style {
  dim(text: string): string;
  bold(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  magenta(text: string): string;
}

const plain = (text: string) => text;
const ansi = (code: number, reset: number) => (text: string) => `\x1b[${code}m${text}\x1b[${reset}m`;

export function styleFor(out: Output, env: NodeJS.ProcessEnv = process.env): Style {
  const color = out.isTTY === true && !env.NO_COLOR && env.TERM !== 'dumb';
  if (!color) return { dim: plain, bold: plain, green: plain, red: plain, yellow: plain, cyan: plain, magenta: plain };
  return {
    dim: ansi(2, 22),
    bold: ansi(1, 22),
    green: ansi(32, 39),
    red: ansi(31, 39),
    yellow: ansi(33, 39),
    cyan: ansi(36, 39),
    magenta: ansi(35, 39),
  };
}

/** Collapses whitespace runs (newlines included) and cuts to `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat;
}

export function progressBar(fraction: number, width = 24): string {
  const clamped = Math.min(1, Math.max(0, fraction));
  const full = Math.round(clamped * width);
  return `${'█'.repeat(full)}${'░'.repeat(width - full)}`;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** Visible length, ignoring colour codes. */
function visibleLength(text: string): number {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/**
 * Lines printed with `print` scroll as usual; the `live` lines stay below
 * them and are redrawn in place. Without a terminal, nothing is live.
 */
export class LiveRegion {
  #lines: string[] = [];
  #shown = 0;
  /** The cursor is in the middle of a line (streamed text). */
  #midLine = false;

  constructor(private readonly out: Output) {}

  get enabled(): boolean {
    return this.out.isTTY === true;
  }

  /** Writes text that may continue on the same line (streamed model output). */
  stream(text: string): void {
    if (this.#shown > 0) {
      this.#clear();
      this.#lines = [];
    }
    this.out.write(text);
    this.#midLine = !text.endsWith('\n');
  }

  endLine(): void {
    if (this.#midLine) this.out.write('\n');
    this.#midLine = false;
  }

  print(line: string): void {
    this.endLine();
    this.out.write(`${this.#clearCode() + line}\n${this.#drawCode()}`);
  }

  setLive(lines: string[]): void {
    if (!this.enabled) return;
    this.endLine();
    const width = Math.max(20, (this.out.columns || 80) - 1);
    this.#lines = lines.map((line) =>
      visibleLength(line) > width ? oneLine(line.replace(/\x1b\[[0-9;]*m/g, ''), width) : line,
    );
    this.out.write(this.#clearCode() + this.#drawCode());
  }

  #clear(): void {
    this.out.write(this.#clearCode());
  }

  #clearCode(): string {
    if (this.#shown === 0) return '';
    const code = `\x1b[${this.#shown}F\x1b[J`;
    this.#shown = 0;
    return code;
  }

  #drawCode(): string {
    this.#shown = this.#lines.length;
    return this.#lines.map((line) => `${line}\n`).join('');
  }
}
