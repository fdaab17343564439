import { createWriteStream, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { FROM_HOST_FD, TO_HOST_FD } from './child-launcher.ts';
import { encodeFrame, FrameReader } from './frame-channel.ts';
import type { ChildToHost, HostToChild } from './process-protocol.ts';

/** The host is trusted: its frames are bounded only by what the framing can say. */
const MAX_HOST_FRAME_BYTES = 0xffff_ffff;

/**
 * The child's end of its channel to the host: toolpool's framing, read from
 * the socket on stdin, written to fd 3 (see FROM_HOST_FD for why two). When
 * the host goes away (stdin ends), or the host's bytes are not frames,
 * `onClosed` runs: the child has no one to serve.
 */
export function openHostChannel(
  onMessage: (message: HostToChild) => void,
  onClosed: () => void,
): (message: ChildToHost) => void {
  const fromHost = new Socket({ fd: FROM_HOST_FD, readable: true, writable: false });
  const reader = new FrameReader(
    () => MAX_HOST_FRAME_BYTES,
    (message) => onMessage(message as HostToChild),
    onClosed,
  );
  fromHost.on('data', (chunk: Buffer) => reader.push(chunk));
  fromHost.on('end', onClosed);
  fromHost.on('close', onClosed);
  fromHost.on('error', onClosed);
  return frameWriter(TO_HOST_FD, onClosed);
}

/**
 * Writes frames to `fd` in order. A frame goes out with one write on this
 * thread while nothing is queued: an asynchronous write runs on libuv's
 * thread pool, which costs two thread wake-ups per frame for a few hundred
 * bytes the socket takes at once. What the socket does not take at once
 * (its buffer is full: `EAGAIN`, or a partial write) goes through a write
 * stream, and so does every frame after it until the stream has drained.
 * A write that fails otherwise means the host is gone.
 */
export function frameWriter(
  fd: number,
  onClosed: () => void,
  /** The write on this thread (tests give one that writes less). */
  writeNow: (fd: number, bytes: Uint8Array) => number = writeSync,
): (message: ChildToHost) => void {
  const stream = createWriteStream('', { fd, autoClose: false });
  stream.on('error', onClosed);
  return (message) => {
    if (stream.destroyed) return;
    const frame = encodeFrame(message);
    if (stream.writableLength > 0) return void stream.write(frame);
    let written: number;
    try {
      written = writeNow(fd, frame);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return onClosed();
      written = 0;
    }
    if (written < frame.length) stream.write(frame.subarray(written));
  };
}
