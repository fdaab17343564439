import { createServer, connect, type Server, type AddressInfo } from 'node:net';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseNetAllowlist } from '../../src/isolation/sandbox/net-allowlist.ts';
import { connectTarget, NetProxy, resolveTarget } from '../../src/isolation/sandbox/net-proxy.ts';
import { inDeepTmpdir } from '../support/deep-tmpdir.ts';

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
    expect(await talk(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`)).toBe(
      'HTTP/1.1 200 Connection Established\r\n\r\nupstream says hi',
    );
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

  test('a socket path too long to listen at fails the start with what to do, and leaves no folder behind', async () => {
    // Longer than a Unix socket path may be: Node 20 listened at the path cut short, and the folder stayed.
    const left = await inDeepTmpdir(() =>
      expect(NetProxy.start([])).rejects.toThrow(
        /at most 107 bytes, and this one has \d+ .*Set TMPDIR to a shorter folder/,
      ),
    );
    expect(left).toEqual([]);
  });
});

describe('a listed name cannot lead home (the DNS answer is untrusted)', () => {
  const answers =
    (...addresses: string[]) =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  test('a name whose answer is loopback, private, link-local (cloud metadata) or unspecified is refused', async () => {
    for (const address of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
    ]) {
      expect(await resolveTarget('api.example', answers(address)), address).toMatchObject({
        refused: expect.stringContaining(address),
      });
    }
    // One home address among public ones is enough to refuse: the connection might take any.
    expect(await resolveTarget('api.example', answers('93.184.216.34', '127.0.0.1'))).toHaveProperty('refused');
  });

  test('a public answer is used as it was checked; literal loopback entries and localhost were listed on purpose', async () => {
    expect(await resolveTarget('api.example', answers('93.184.216.34', '2606:2800:220:1::1'))).toEqual({
      address: '93.184.216.34',
    });
    expect(await resolveTarget('127.0.0.1', answers('10.0.0.1'))).toEqual({ address: '127.0.0.1' });
    expect(await resolveTarget('localhost', answers('127.0.0.1', '::1'))).toEqual({ address: '127.0.0.1' });
    expect(await resolveTarget('localhost', answers('10.0.0.1'))).toHaveProperty('refused');
    expect(
      await resolveTarget('api.example', async () =>
        Promise.reject(Object.assign(new Error('no'), { code: 'ENOTFOUND' })),
      ),
    ).toEqual({ refused: 'api.example does not resolve (ENOTFOUND)' });
  });

  test('through the proxy: a listed name answered with 127.0.0.1 gets 403, not the host port', async () => {
    const rebinding = await NetProxy.start(parseNetAllowlist([`evil.example:${port}`]), false, answers('127.0.0.1'));
    try {
      const reply = await new Promise<string>((resolve) => {
        const socket = connect(rebinding.socketPath, () =>
          socket.write(`CONNECT evil.example:${port} HTTP/1.1\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', () => resolve(text));
      });
      expect(reply).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(reply).not.toContain('upstream says hi');
    } finally {
      await rebinding.close();
    }
  });
});
