import { createWriteStream } from 'node:fs';
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
  // Writes go out in order through one stream; a write that fails means the host is gone.
  const toHost = createWriteStream('', { fd: TO_HOST_FD, autoClose: false });
  toHost.on('error', onClosed);
  return (message) => {
    if (toHost.destroyed) return;
    for (const part of encodeFrame(message)) toHost.write(part);
  };
}
