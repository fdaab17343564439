import { createServer, connect, type Server, type AddressInfo } from 'node:net';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseNetAllowlist } from '../../src/isolation/sandbox/net-allowlist.ts';
import { connectTarget, NetProxy } from '../../src/isolation/sandbox/net-proxy.ts';

let upstream: Server;
let port = 0;
let proxy: NetProxy;

beforeAll(async () => {
  upstream = createServer((socket) => socket.end('upstream says hi'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  port = (upstream.address() as AddressInfo).port;
  proxy = await NetProxy.start(parseNetAllowlist([`127.0.0.1:${port}`]));
});
afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => upstream.close(resolve));
});

/** Sends raw bytes to the proxy socket and collects everything until it closes. */
function talk(bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(proxy.socketPath, () => socket.write(bytes));
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    socket.on('close', () => resolve(reply));
    socket.on('error', () => resolve(reply));
  });
}

describe('host-side proxy', () => {
  test('tunnels a listed target, including bytes sent right after the request', async () => {
    expect(await talk(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`)).toBe('HTTP/1.1 200 Connection Established\r\n\r\nupstream says hi');
  });

  test('refuses what is not listed or not a CONNECT, whoever speaks to the socket', async () => {
    expect(await talk(`CONNECT 127.0.0.1:${port + 1} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(await talk(`GET http://127.0.0.1:${port}/ HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(await talk(`CONNECT localhost:${port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(await talk(`${'A'.repeat(8192)}`)).toMatch(/^HTTP\/1\.1 431/);
  });

  test('parses only a plain request line', () => {
    expect(connectTarget('CONNECT Example.COM:443 HTTP/1.1\r\nHost: x')).toBe('example.com:443');
    expect(connectTarget('CONNECT a b HTTP/1.1')).toBeUndefined();
    expect(connectTarget('connect a:1 HTTP/1.1')).toBeUndefined();
  });

  test('its socket lives in a folder only this user can open, removed on close', async () => {
    const other = await NetProxy.start([]);
    const folder = dirname(other.socketPath);
    expect(statSync(folder).mode & 0o077).toBe(0);
    await other.close();
    expect(existsSync(folder)).toBe(false);
  });
});
