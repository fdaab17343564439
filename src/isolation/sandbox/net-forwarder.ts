import { createConnection, createServer, type Socket } from 'node:net';
import type { ForwardRule } from './net-allowlist.ts';

/** The longest reply head the forwarder waits for from the host-side proxy. */
const MAX_REPLY_BYTES = 1024;

/**
 * Runs inside the sandbox, on the child's main thread, before any tool
 * loads. For each allowed target it listens on that target's loopback
 * address in the sandbox's own network namespace (where `/etc/hosts` sends
 * the target's name), so a tool's plain `fetch()` or `net.connect` reaches
 * it; each connection is tunnelled through the host-side proxy's Unix
 * socket with a CONNECT for the target. This is convenience, not the
 * boundary: the namespace has no other way out, and the host side checks
 * every CONNECT against the list itself.
 */
export async function startForwarders(socketPath: string, rules: readonly ForwardRule[]): Promise<void> {
  await Promise.all(rules.map((rule) => listen(socketPath, rule)));
}

function listen(socketPath: string, rule: ForwardRule): Promise<void> {
  const server = createServer((local) => forward(local, socketPath, rule.target));
  server.unref(); // the child's lifetime is its IPC channel's, not the forwarders'
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: rule.listenHost, port: rule.port, exclusive: true }, () => resolve());
  });
}

function forward(local: Socket, socketPath: string, target: string): void {
  local.pause();
  const tunnel = createConnection(socketPath);
  const closeBoth = () => {
    local.destroy();
    tunnel.destroy();
  };
  local.on('error', closeBoth);
  tunnel.on('error', closeBoth);
  local.on('close', closeBoth);
  tunnel.on('close', closeBoth);
  tunnel.once('connect', () => tunnel.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
  let reply = Buffer.alloc(0);
  const onReply = (chunk: Buffer) => {
    reply = Buffer.concat([reply, chunk]);
    const end = reply.indexOf('\r\n\r\n');
    if (end === -1) return void (reply.length > MAX_REPLY_BYTES && closeBoth());
    tunnel.off('data', onReply);
    if (!/^HTTP\/1\.[01] 200 /.test(reply.subarray(0, end).toString('latin1'))) return closeBoth();
    const rest = reply.subarray(end + 4);
    if (rest.length > 0) local.write(rest);
    local.pipe(tunnel);
    tunnel.pipe(local);
    local.resume();
  };
  tunnel.on('data', onReply);
}
