import { Socket } from 'node:net';
import { CHANNEL_FD } from './child-launcher.ts';
import { encodeFrame, FrameReader } from './frame-channel.ts';
import type { ChildToHost, HostToChild } from './process-protocol.ts';

/** The host is trusted: its frames are bounded only by what the framing can say. */
const MAX_HOST_FRAME_BYTES = 0xffff_ffff;

/**
 * The child's end of its channel to the host: toolpool's framing on the
 * socket at fd 3. When the host goes away (the socket ends), or the host's
 * bytes are not frames, `onClosed` runs: the child has no one to serve.
 */
export function openHostChannel(onMessage: (message: HostToChild) => void, onClosed: () => void): (message: ChildToHost) => void {
  const socket = new Socket({ fd: CHANNEL_FD, readable: true, writable: true });
  const reader = new FrameReader(() => MAX_HOST_FRAME_BYTES, (message) => onMessage(message as HostToChild), onClosed);
  socket.on('data', (chunk: Buffer) => reader.push(chunk));
  socket.on('end', onClosed);
  socket.on('close', onClosed);
  socket.on('error', onClosed);
  return (message) => {
    if (socket.destroyed) return;
    for (const part of encodeFrame(message)) socket.write(part);
  };
}
