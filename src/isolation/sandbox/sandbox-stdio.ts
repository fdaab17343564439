import { mkdtemp, rm } from 'node:fs/promises';
import { forwardToolOutput } from '../worker/tool-output.ts';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
 */
export async function sandboxStdio(): Promise<SandboxStdio> {
  const folder = await mkdtemp(join(tmpdir(), 'toolpool-stdio-'));
  const path = join(folder, 'stdio.sock');
  const accepted: Socket[] = [];
  const server = createServer((peer) => {
    accepted.push(peer);
    peer.on('error', () => peer.destroy());
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
  const connect = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = createConnection(path, () => resolve(socket)).once('error', reject);
    });
  // One at a time, so the first accepted peer is stdout's and the second stderr's.
  const stdout = await connect();
  while (accepted.length < 1) await new Promise((resolve) => setImmediate(resolve));
  const stderr = await connect();
  while (accepted.length < 2) await new Promise((resolve) => setImmediate(resolve));
  server.close();
  await rm(folder, { recursive: true, force: true }); // connected sockets need no name
  // Both go to the host's stderr, marked as a tool's: never to its stdout, which a host may use for a protocol.
  for (const peer of accepted) forwardToolOutput(peer);
  // Like the child's IPC channel when idle, these must not keep the host alive.
  for (const socket of [stdout, stderr, ...accepted]) socket.unref();
  return {
    stdout,
    stderr,
    stderrArrives: accepted[1]!,
    // The host's ends only: the copying ends finish by themselves once the child's copies close.
    async close() {
      stdout.destroy();
      stderr.destroy();
    },
  };
}
