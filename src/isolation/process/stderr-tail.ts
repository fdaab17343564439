import type { Readable } from 'node:stream';

/** V8 prints its native stack (a few KiB) after the line that says why it aborted. */
const TAIL_CHARS = 16 * 1024;
/**
 * How long a dead child's stderr may take to reach its end. The pipe closes
 * when the child and what it left running are gone (they are killed with it):
 * this bounds only a descendant that somehow keeps it open.
 */
const DRAIN_BOUND_MS = 1_000;
/** How V8 and Node say that the data cap was reached, when they abort instead of throwing. */
const OUT_OF_MEMORY =
  /Fatal process out of memory[^\n]*|Allocation failed[^\n]*|Failed to reserve virtual memory[^\n]*|Array buffer allocation failed|Failed to allocate memory/i;

/**
 * The end of a child's stderr, where V8 prints why it aborted. A child's
 * 'exit' can come before the last of its stderr is read (V8's report of an
 * out-of-memory abort is a few KiB, written just before the abort), so
 * what the child died of is read only once the pipe has ended.
 */
export class StderrTail {
  #text = '';
  readonly #ended: Promise<void>;

  constructor(stderr: Readable | null) {
    if (!stderr) {
      this.#ended = Promise.resolve();
      return;
    }
    stderr.on('data', (chunk: string | Buffer) => {
      this.#text = (this.#text + chunk.toString()).slice(-TAIL_CHARS);
    });
    this.#ended = new Promise((resolve) => {
      stderr.once('end', resolve);
      stderr.once('close', resolve);
      stderr.once('error', resolve);
    });
  }

  /** V8's words for an out-of-memory abort in what the child printed last, once its stderr ended (or after a bound). */
  async outOfMemory(): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_BOUND_MS)));
    await Promise.race([this.#ended, bound]);
    clearTimeout(timer);
    return OUT_OF_MEMORY.exec(this.#text)?.[0];
  }
}

/** Whether an error text (a worker's, inside the child) is V8's or Node's word for an allocation the cap refused. */
export function saysOutOfMemory(text: string): boolean {
  return OUT_OF_MEMORY.test(text);
}
