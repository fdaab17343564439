import { DefaultSerializer, deserialize } from 'node:v8';
import { ToolpoolError } from '../../core/error-codes.ts';

/**
 * toolpool's own framing for the channel between the host and a process
 * tier child, in place of Node's IPC channel: Node's frame parser throws on
 * junk (killing the host) and buffers a whole frame, however large, before
 * anyone sees it; and every thread of the child, tool threads included, can
 * write to the descriptor. Here each frame is a 4-byte big-endian length
 * and then the message in V8's structured-clone format. The reader checks
 * the length before it keeps a byte of the body, and anything that is not a
 * frame is a problem reported once, after which the reader stops: the
 * child that sent it is done.
 */
const HEADER_BYTES = 4;
/** The largest length the header can say; a reader's own bound is usually far lower. */
const MAX_FRAME_BYTES = 0xffff_ffff;
const HEADER_PLACEHOLDER = new Uint8Array(HEADER_BYTES);

/**
 * One message as the bytes to write: header, then body, in one buffer, so a
 * frame is one write and wakes the reader once (a header written on its own
 * woke the other side for 4 bytes it could not use yet). The serializer
 * writes the body after 4 placeholder bytes, which then get its length: the
 * body is `v8.serialize(message)` exactly, never copied.
 */
export function encodeFrame(message: unknown): Buffer {
  const serializer = new DefaultSerializer();
  serializer.writeRawBytes(HEADER_PLACEHOLDER);
  serializer.writeHeader();
  serializer.writeValue(message);
  const frame = serializer.releaseBuffer();
  const length = frame.length - HEADER_BYTES;
  if (length > MAX_FRAME_BYTES)
    throw new ToolpoolError('TOOLPOOL_ERR_PROTOCOL', `a message of ${length} bytes cannot be framed`);
  frame.writeUInt32BE(length, 0);
  return frame;
}

export class FrameReader {
  readonly #chunks: Buffer[] = [];
  #buffered = 0;
  /** The body length the current header announced; -1 while reading a header. */
  #expected = -1;
  #failed = false;

  constructor(
    /** The largest body accepted now (it may depend on the calls in flight). */
    private readonly maxFrameBytes: () => number,
    private readonly onMessage: (message: unknown) => void,
    /** Called once with what was wrong; no message is delivered after it. */
    private readonly onProblem: (problem: string) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.#failed) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    while (!this.#failed) {
      if (this.#expected < 0) {
        if (this.#buffered < HEADER_BYTES) return;
        const length = this.#take(HEADER_BYTES).readUInt32BE(0);
        const max = this.maxFrameBytes();
        if (length > max)
          return this.#fail(`a frame of ${length} bytes, over the ${max} bytes a message may have here`);
        if (length === 0) return this.#fail('an empty frame');
        this.#expected = length;
      }
      if (this.#buffered < this.#expected) return;
      const body = this.#take(this.#expected);
      this.#expected = -1;
      let message: unknown;
      try {
        message = deserialize(body);
      } catch {
        return this.#fail(`${body.length} bytes that are not a message`);
      }
      this.onMessage(message);
    }
  }

  #fail(problem: string): void {
    this.#failed = true;
    this.#chunks.length = 0;
    this.#buffered = 0;
    this.onProblem(problem);
  }

  /** The next `bytes` bytes, taken off the buffered chunks. */
  #take(bytes: number): Buffer {
    this.#buffered -= bytes;
    const first = this.#chunks[0]!;
    if (first.length >= bytes) {
      if (first.length === bytes) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(bytes);
      return first.subarray(0, bytes);
    }
    const out = Buffer.allocUnsafe(bytes);
    let filled = 0;
    while (filled < bytes) {
      const chunk = this.#chunks[0]!;
      const used = Math.min(chunk.length, bytes - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (used === chunk.length) this.#chunks.shift();
      else this.#chunks[0] = chunk.subarray(used);
    }
    return out;
  }
}
