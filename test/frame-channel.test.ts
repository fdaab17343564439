/**
 * The process tier's framed channel (frame-channel.ts, host-channel.ts):
 * a frame is one buffer (one write, one wake-up of the reader), the child
 * writes it on its own thread while nothing is queued, and what a write
 * does not take goes out after it, in order.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { afterEach, describe, expect, test } from 'vitest';
import { encodeFrame, FrameReader } from '../src/isolation/process/frame-channel.ts';
import { frameWriter } from '../src/isolation/process/host-channel.ts';
import type { ChildToHost } from '../src/isolation/process/process-protocol.ts';
import { fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every message the bytes hold, read as the host reads a child's frames. */
function framesIn(bytes: Buffer): unknown[] {
  const messages: unknown[] = [];
  const problems: string[] = [];
  new FrameReader(
    () => 64 << 20,
    (message) => messages.push(message),
    (problem) => problems.push(problem),
  ).push(bytes);
  expect(problems).toEqual([]);
  return messages;
}

const update = (id: number, text: string): ChildToHost => ({
  type: 'update',
  id,
  partial: { content: [{ type: 'text', text }] },
});

describe('framed channel', () => {
  test('a frame is one buffer: a 4-byte big-endian length, then exactly v8.serialize of the message', () => {
    // A two-byte string (V8 aligns those) and a typed array (a host object) among plain values.
    const message = { type: 'update', id: 7, partial: { text: 'naïve → ☃ 𝄞', bytes: new Uint8Array([1, 2, 3]) } };
    const frame = encodeFrame(message);
    expect(Buffer.isBuffer(frame)).toBe(true);
    const body = serialize(message);
    expect(frame.readUInt32BE(0)).toBe(body.length);
    expect(frame.subarray(4).equals(body)).toBe(true);
    expect(framesIn(frame)).toEqual([message]);
  });

  test('the child writes frames in order, also when a write takes only part of one and the rest is queued', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolpool-frames-'));
    dirs.push(dir);
    const file = join(dir, 'channel');
    const fd = openSync(file, 'w');
    let closed = 0;
    let writes = 0;
    // The second write takes 3 bytes of its frame: the rest, and every frame after it, must follow in order.
    const short = (target: number, bytes: Uint8Array) =>
      ++writes === 2 ? writeSync(target, bytes, 0, 3) : writeSync(target, bytes);
    const send = frameWriter(fd, () => closed++, short);
    const sent = [update(1, 'a'), update(2, 'b'.repeat(100_000)), update(3, 'c'), update(4, 'd')];
    for (const message of sent) send(message);
    // The queued rest goes out asynchronously: wait until the file holds every frame.
    const expected = sent.reduce((sum, message) => sum + encodeFrame(message).length, 0);
    for (let i = 0; i < 200 && readFileSync(file).length < expected; i++) await new Promise((r) => setTimeout(r, 10));
    closeSync(fd);
    expect(framesIn(readFileSync(file))).toEqual(sent);
    expect(closed).toBe(0);
  });

  test('a write that fails (the host is gone) closes the channel instead of throwing', () => {
    let closed = 0;
    const send = frameWriter(
      1_000_000,
      () => closed++,
      () => {
        throw Object.assign(new Error('EBADF'), { code: 'EBADF' });
      },
    );
    expect(() => send(update(1, 'x'))).not.toThrow();
    expect(closed).toBe(1);
  });

  test('through a real child: an update of 1 MiB and a result of 6 MiB (far more than a socket buffer) arrive whole, in order', async () => {
    const executor = await createExecutor({
      tools: [fixture('frames/big-text.ts')],
      isolation: 'process',
      limits: { maxResultBytes: 8 << 20 },
    });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([
      { id: 'c', name: 'big_text', arguments: { bytes: 6 << 20, updateBytes: 1 << 20 } },
    ]);
    expect(results[0]!.isError).toBe(false);
    expect(textOf(results[0]!)).toBe('x'.repeat(6 << 20));
    const updates = events.filter((event) => event.type === 'tool_update');
    expect(updates).toHaveLength(1);
    expect(events.map((event) => event.type)).toEqual(['tool_start', 'tool_update', 'tool_end']);
  });
});
