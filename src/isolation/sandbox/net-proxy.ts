import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NetTarget } from './net-allowlist.ts';

/** The request line and headers of a CONNECT may be this long at most. */
const MAX_HEADER_BYTES = 4096;
/** A client that does not finish its CONNECT request in this time is dropped. */
const HEADER_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** Open tunnels at most, so a sandbox cannot exhaust the host's descriptors. */
const MAX_TUNNELS = 64;
/** close() waits this long at most for the server to let go. */
const CLOSE_TIMEOUT_MS = 1_000;

/**
 * The sandbox's only way out: an HTTP CONNECT proxy on a Unix socket in a
 * private folder of the host, bound into the sandbox. Everything sandboxed
 * code sends it is untrusted, and the sandboxed code may speak to the
 * socket directly instead of through the forwarder, so this side alone
 * decides: a target not in the list, or anything that is not a CONNECT
 * for `host:port`, gets 403 and the connection closed.
 */
export class NetProxy {
  readonly #server: Server;
  readonly #tunnels = new Set<Socket>();

  private constructor(
    readonly socketPath: string,
    private readonly folder: string,
    private readonly allowed: ReadonlySet<string>,
  ) {
    this.#server = createServer((client) => this.#accept(client));
    this.#server.maxConnections = MAX_TUNNELS;
  }

  /** `writableAll`: the socket itself is open to every user (the sandbox's nobody); its 0700 folder still keeps the host's other users out. */
  static async start(targets: readonly NetTarget[], writableAll = false): Promise<NetProxy> {
    // mkdtemp makes the folder 0700: no other user of the host reaches the socket.
    const folder = await mkdtemp(join(tmpdir(), 'toolpool-net-'));
    const proxy = new NetProxy(join(folder, 'net.sock'), folder, new Set(targets.map((t) => t.key)));
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen({ path: proxy.socketPath, writableAll, readableAll: writableAll }, () => resolve());
    });
    proxy.#server.unref();
    return proxy;
  }

  async close(): Promise<void> {
    for (const socket of this.#tunnels) socket.destroy();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_TIMEOUT_MS).unref();
      this.#server.close(() => (clearTimeout(timer), resolve()));
    });
    await rm(this.folder, { recursive: true, force: true });
  }

  #accept(client: Socket): void {
    this.#track(client);
    client.setTimeout(HEADER_TIMEOUT_MS, () => client.destroy());
    client.on('error', () => client.destroy());
    let header = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      header = Buffer.concat([header, chunk]);
      const end = header.indexOf('\r\n\r\n');
      if (end === -1) {
        if (header.length > MAX_HEADER_BYTES) {
          client.off('data', onData);
          refuse(client, '431 Request Header Fields Too Large');
        }
        return;
      }
      client.off('data', onData);
      client.pause();
      const target = connectTarget(header.subarray(0, end).toString('latin1'));
      if (target === undefined || !this.allowed.has(target)) return refuse(client, '403 Forbidden');
      this.#tunnel(client, target, header.subarray(end + 4));
    };
    client.on('data', onData);
  }

  #tunnel(client: Socket, target: string, early: Buffer): void {
    const { host, port } = splitTarget(target);
    const upstream = createConnection({ host, port, timeout: CONNECT_TIMEOUT_MS });
    this.#track(upstream);
    let established = false;
    upstream.once('timeout', () => upstream.destroy(new Error('connect timeout')));
    upstream.once('connect', () => {
      established = true;
      upstream.setTimeout(0);
      client.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (early.length > 0) upstream.write(early);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on('error', () => (established ? client.destroy() : refuse(client, '502 Bad Gateway')));
    upstream.on('close', () => established && client.destroy());
    client.on('close', () => upstream.destroy());
  }

  /** Tracked to be destroyed on close(); unref'd, so a tunnel a tool leaves open does not keep the host alive. */
  #track(socket: Socket): void {
    socket.unref();
    this.#tunnels.add(socket);
    socket.once('close', () => this.#tunnels.delete(socket));
  }
}

/** `CONNECT host:port HTTP/1.1` → the target in the list's form, or undefined for anything else. */
export function connectTarget(head: string): string | undefined {
  const requestLine = head.split('\r\n', 1)[0] ?? '';
  const match = /^CONNECT (\S{1,300}) HTTP\/1\.[01]$/.exec(requestLine);
  return match ? match[1]!.toLowerCase() : undefined;
}

function splitTarget(target: string): { host: string; port: number } {
  const colon = target.lastIndexOf(':');
  const host = target.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(target.slice(colon + 1)) };
}

function refuse(client: Socket, status: string): void {
  // The header timeout still runs and destroys a client that keeps the socket open.
  if (client.writable) client.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
}
