import { isIPv4, isIPv6 } from 'node:net';
import { SandboxErrors } from '../../core/errors.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

/** One `permissions.net` entry: a host (name or loopback address) and a port. */
export interface NetTarget {
  host: string;
  port: number;
  /** `host:port` as the host-side proxy compares it (lower case, IPv6 in brackets). */
  key: string;
}

/**
 * Where the sandbox's forwarder listens for one target, inside the
 * sandbox's own network namespace (in which loopback is the sandbox's own):
 * a loopback address that the target's host name resolves to there.
 */
export interface ForwardRule {
  listenHost: string;
  port: number;
  /** What the forwarder asks the host-side proxy for. */
  target: string;
}

/** Host names are matched exactly, so keep them to what DNS allows. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const MAX_ENTRIES = 200;

/**
 * Checks a `permissions.net` list. Names and loopback addresses only: the
 * sandbox reaches each target through a forwarder listening on a loopback
 * address of its own network namespace, and it cannot listen on another
 * machine's address.
 */
export function parseNetAllowlist(entries: readonly unknown[]): NetTarget[] {
  if (entries.length > MAX_ENTRIES)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      SandboxErrors.badNetEntry(`(${entries.length} entries)`, `is too long; at most ${MAX_ENTRIES}`),
    );
  const targets = new Map<string, NetTarget>();
  for (const entry of entries) {
    const target = parseEntry(entry);
    targets.set(target.key, target);
  }
  return [...targets.values()];
}

function parseEntry(entry: unknown): NetTarget {
  if (typeof entry !== 'string')
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      SandboxErrors.badNetEntry(String(entry), 'must be a "host:port" string'),
    );
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry.trim());
  if (!match)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      SandboxErrors.badNetEntry(entry, 'must be "host:port" (an IPv6 address in brackets: "[::1]:8080")'),
    );
  const port = Number(match[3]);
  if (port < 1 || port > 65_535)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      SandboxErrors.badNetEntry(entry, 'has a port outside 1-65535'),
    );
  const host = (match[1] ?? match[2]!).toLowerCase();
  if (match[1] !== undefined) {
    if (host !== '::1')
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        SandboxErrors.badNetEntry(entry, 'names an IPv6 address other than [::1]; list the host by name instead'),
      );
    return { host, port, key: `[${host}]:${port}` };
  }
  if (isIPv4(host)) {
    if (!host.startsWith('127.'))
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        SandboxErrors.badNetEntry(entry, 'names an IP address outside 127.0.0.0/8; list the host by name instead'),
      );
    return { host, port, key: `${host}:${port}` };
  }
  if (isIPv6(host) || !HOST_NAME.test(host))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      SandboxErrors.badNetEntry(entry, 'has an invalid host name'),
    );
  return { host, port, key: `${host}:${port}` };
}

/**
 * Gives every host name its own loopback address inside the sandbox
 * (127.0.0.2 upwards, skipping addresses listed literally), so that
 * `/etc/hosts` there can send the name to the forwarder.
 */
export function forwardRules(targets: readonly NetTarget[]): { rules: ForwardRule[]; hosts: Map<string, string> } {
  const literal = new Set(targets.filter((t) => isIPv4(t.host) || isIPv6(t.host)).map((t) => t.host));
  const hosts = new Map<string, string>();
  let next = 2;
  const addressFor = (name: string) => {
    let address = hosts.get(name);
    while (address === undefined) {
      const candidate = `127.0.${next >> 8}.${next & 255}`;
      next++;
      if (!literal.has(candidate)) address = candidate;
    }
    hosts.set(name, address);
    return address;
  };
  const rules = targets.map((t) => ({
    listenHost: isIPv4(t.host) || isIPv6(t.host) ? t.host : addressFor(t.host),
    port: t.port,
    target: t.key,
  }));
  return { rules, hosts };
}

/** The sandbox's /etc/hosts: the listed names on their forwarders' addresses, nothing of the host's. */
export function hostsFile(hosts: ReadonlyMap<string, string>): string {
  const lines = ['127.0.0.1 localhost', '::1 localhost'];
  for (const [name, address] of hosts) lines.push(`${address} ${name}`);
  // Later lines do not override earlier ones; a listed "localhost" must win.
  if (hosts.has('localhost')) lines.splice(0, 2);
  return `${lines.join('\n')}\n`;
}

/** Ports below 1024 need CAP_NET_BIND_SERVICE in the sandbox for the forwarder to listen there. */
export function needsLowPorts(targets: readonly NetTarget[]): boolean {
  return targets.some((t) => t.port < 1024);
}
