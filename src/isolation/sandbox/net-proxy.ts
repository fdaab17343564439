import { lookup } from 'node:dns/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { BlockList, createConnection, createServer, isIP, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NetTarget } from './net-allowlist.ts';
import { checkSocketPath } from './socket-path.ts';

/** The request line and headers of a CONNECT may be this long at most. */
const MAX_HEADER_BYTES = 4096;
/** A client that does not finish its CONNECT request in this time is dropped. */
const HEADER_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/** Open tunnels at most, so a sandbox cannot exhaust the host's descriptors. */
const MAX_TUNNELS = 64;
/** close() waits this long at most for the server to let go. */
const CLOSE_TIMEOUT_MS = 1_000;

/** Resolves a listed name on the host: every address it has. */
export type Resolver = (host: string) => Promise<readonly { address: string; family: number }[]>;

const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Addresses a listed name may not lead to: the host's own and its private
 * networks (loopback, RFC 1918, shared address space, link-local with the
 * cloud metadata service, unique-local and site-local IPv6, unspecified,
 * multicast, reserved; an IPv4 address inside IPv6 is checked as IPv4).
 * The DNS answer for a listed name is the name owner's to choose, and may
 * be a tool author's: it must not turn "example.com:443" into the host's
 * Redis. A host that means its loopback lists it literally
 * (`127.0.0.1:6379`, `[::1]:6379`) or as `localhost`.
 */
const HOME = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  HOME.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  HOME.addSubnet(network, prefix, 'ipv6');
}
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addSubnet('::1', 128, 'ipv6');

/** An IPv6 address that carries an IPv4 one (`::ffff:127.0.0.1`, `::127.0.0.1`): the IPv4 one. */
function plain(address: string): string {
  const embedded = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return embedded ? embedded[1]! : address;
}

function within(list: BlockList, address: string): boolean {
  const ip = plain(address);
  const family = isIP(ip);
  if (family === 0) return true; // not an address: treated as the worst case
  return list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Where a listed target may be reached: the address to connect to, or the
 * reason it may not. A literal address was listed on purpose (the list
 * takes loopback ones only). `localhost` must resolve to loopback only;
 * any other name to no address of the host's or its private networks. The
 * address checked is the one connected to, so a second DNS answer cannot
 * differ from the first.
 */
export async function resolveTarget(
  host: string,
  resolver: Resolver = systemResolver,
): Promise<{ address: string } | { refused: string }> {
  if (isIP(host) !== 0) return { address: host };
  let answers: readonly { address: string }[];
  try {
    answers = await resolver(host);
  } catch (error) {
    return { refused: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (answers.length === 0) return { refused: `${host} does not resolve` };
  const home =
    host === 'localhost'
      ? answers.find((a) => !within(LOOPBACK, a.address))
      : answers.find((a) => within(HOME, a.address));
  if (home)
    return {
      refused: `${host} resolves to ${home.address}, ${host === 'localhost' ? 'not a loopback address' : "the host's own or a private address"}`,
    };
  return { address: answers[0]!.address };
}

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
    private readonly resolver: Resolver,
  ) {
    this.#server = createServer((client) => this.#accept(client));
    this.#server.maxConnections = MAX_TUNNELS;
  }

  /** `writableAll`: the socket itself is open to every user (the sandbox's nobody); its 0700 folder still keeps the host's other users out. */
  static async start(
    targets: readonly NetTarget[],
    writableAll = false,
    resolver: Resolver = systemResolver,
  ): Promise<NetProxy> {
    // mkdtemp makes the folder 0700: no other user of the host reaches the socket.
    const folder = await mkdtemp(join(tmpdir(), 'toolpool-net-'));
    const proxy = new NetProxy(join(folder, 'net.sock'), folder, new Set(targets.map((t) => t.key)), resolver);
    try {
      checkSocketPath(proxy.socketPath);
      await new Promise<void>((resolve, reject) => {
        proxy.#server.once('error', reject);
        proxy.#server.listen({ path: proxy.socketPath, writableAll, readableAll: writableAll }, () => resolve());
      });
    } catch (error) {
      // No proxy to close later: its folder goes now (a start that failed left one per launch before).
      await rm(folder, { recursive: true, force: true });
      throw error;
    }
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
      const { host, port } = splitTarget(target);
      void resolveTarget(host, this.resolver).then((where) => {
        if ('refused' in where) return refuse(client, '403 Forbidden');
        if (!client.destroyed) this.#tunnel(client, where.address, port, header.subarray(end + 4));
      });
    };
    client.on('data', onData);
  }

  #tunnel(client: Socket, host: string, port: number, early: Buffer): void {
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
