import { mkdtemp, rm } from 'node:fs/promises';
import { forwardToolOutput } from '../worker/tool-output.ts';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkSocketPath } from './socket-path.ts';

/** The sandbox's stdout and stderr: one end of a Unix socket each, the other end copied to the host's. */
export interface SandboxStdio {
  stdout: Socket;
  stderr: Socket;
  /** The host's end of `stderr`: what the child writes there arrives here (and is copied to the host's stderr). */
  stderrArrives: Socket;
  close(): Promise<void>;
}

/**
 * What a sandbox writes reaches the host's stdout and stderr, but not
 * through the host's own descriptors: a process can reopen its stdout
 * through /proc/self/fd/1 for reading, and if that is the host's log file
 * or terminal, read it (seen: a sandboxed tool read the host's stderr log).
 * A socket cannot be reopened that way (ENXIO), so the child gets sockets,
 * and the host copies what arrives.
 *
 * Rejects (leaving nothing open) when a socket cannot be made: a host out
 * of descriptors gets an error for this start, not a crash of the host
 * (an accept that fails is an 'error' event of the server).
 */
export async function sandboxStdio(): Promise<SandboxStdio> {
  const folder = await mkdtemp(join(tmpdir(), 'toolpool-stdio-'));
  const path = join(folder, 'stdio.sock');
  const server = createServer();
  server.on('error', () => undefined); // each wait below hears it as well
  const made: Socket[] = [];
  try {
    checkSocketPath(path);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
    // One at a time, so the first pair is stdout's and the second stderr's.
    const [stdout, stdoutPeer] = await connectedPair(server, path, made);
    const [stderr, stderrPeer] = await connectedPair(server, path, made);
    // Both go to the host's stderr, marked as a tool's: never to its stdout, which a host may use for a protocol.
    for (const peer of [stdoutPeer, stderrPeer]) forwardToolOutput(peer);
    // Like the child's IPC channel when idle, these must not keep the host alive.
    for (const socket of made) socket.unref();
    return {
      stdout,
      stderr,
      stderrArrives: stderrPeer,
      // The host's ends only: the copying ends finish by themselves once the child's copies close.
      async close() {
        stdout.destroy();
        stderr.destroy();
      },
    };
  } catch (error) {
    for (const socket of made) socket.destroy();
    throw error;
  } finally {
    server.close();
    await rm(folder, { recursive: true, force: true }); // connected sockets need no name
  }
}

/** Connects to `server` at `path`: this end and the end the server accepted, once both are there. */
function connectedPair(server: Server, path: string, made: Socket[]): Promise<[Socket, Socket]> {
  return new Promise((resolve, reject) => {
    let own: Socket | undefined;
    let peer: Socket | undefined;
    const failed = (error: Error) => {
      server.off('connection', accepted);
      reject(error);
    };
    // Out of descriptors, libuv accepts and closes the connection to keep the server going, and says nothing.
    const closedFirst = () =>
      failed(new Error('the host closed the connection before accepting it (out of descriptors?)'));
    const bothThere = () => {
      if (!own || !peer) return;
      server.off('error', failed);
      socket.off('close', closedFirst);
      resolve([own, peer]);
    };
    const accepted = (socket: Socket) => {
      made.push(socket);
      socket.on('error', () => socket.destroy());
      peer = socket;
      bothThere();
    };
    server.once('connection', accepted);
    server.once('error', failed);
    const socket = createConnection(path, () => {
      own = socket;
      bothThere();
    });
    made.push(socket);
    socket.once('error', failed);
    socket.once('close', closedFirst);
  });
}
