/**
 * Where a stdio MCP server runs: by default in the sandbox tier (bubblewrap),
 * which shows it only its command, its libraries and what permissions
 * grant, gives it `env` alone, a PID namespace of its own and no network
 * but the `net` list; with `isolation: 'process'` a process group (and PID
 * namespace) of its own with the host user's rights.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createExecutor, type Executor } from '../../src/index.ts';
import { SANDBOX_UID_BASE } from '../../src/isolation/sandbox/sandbox-user.ts';
import { call, textOf } from '../support/executors.ts';
import { MCP_FIXTURES, stdioServer } from '../support/mcp-servers.ts';
import { captureWarnings, restoreWarningsAfterEach } from '../support/warnings.ts';

const scratch = mkdtempSync(join(tmpdir(), 'toolpool-mcp-sandbox-'));
restoreWarningsAfterEach();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A TCP server on the host that greets whoever connects. */
async function greeter(greeting: string): Promise<Server & { port: number }> {
  const server = createServer((socket) => socket.end(`${greeting}\n`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

async function run(executor: Executor, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const { results } = await executor.executeBatch([call('1', name, args)]);
  return textOf(results[0]!);
}

describe('a sandboxed server', () => {
  let executor: Executor;
  let readable: string;
  let writable: string;
  let secret: string;
  let allowed: Server & { port: number };
  let other: Server & { port: number };

  beforeAll(async () => {
    readable = mkdtempSync(join(scratch, 'read-'));
    writable = mkdtempSync(join(scratch, 'write-'));
    // The host runs as root in CI: the sandbox runs as nobody, so what it is given must let that user in (mkdtemp makes 0700).
    chmodSync(readable, 0o755);
    chmodSync(writable, 0o777);
    writeFileSync(join(readable, 'data.txt'), 'granted data');
    secret = join(mkdtempSync(join(scratch, 'other-')), 'secret.txt');
    writeFileSync(secret, 'not granted');
    [allowed, other] = await Promise.all([greeter('hello from the allowed port'), greeter('hello from another port')]);
    executor = await createExecutor({
      mcpServers: {
        box: stdioServer({
          env: { GREETING: 'only this' },
          permissions: { fsRead: [readable], fsWrite: [writable], net: [`127.0.0.1:${allowed.port}`] },
        }),
      },
    });
  });
  afterAll(async () => {
    await executor.close();
    allowed.close();
    other.close();
  });

  test('calls one after the other leave nothing behind on its streams (its plan descriptor is closed: unref() there would wait for a connect)', async () => {
    const warnings = captureWarnings();
    for (let i = 0; i < 15; i++) expect(await run(executor, 'box_echo', { text: 'again' })).toBe('again');
    expect(warnings.filter((warning) => /MaxListenersExceeded|memory leak/.test(warning))).toEqual([]);
  });

  test('reads only fsRead (and the files it needs to run), writes only fsWrite', async () => {
    expect(await run(executor, 'box_read', { path: join(readable, 'data.txt') })).toBe('read: granted data');
    expect(await run(executor, 'box_read', { path: secret })).toBe('failed: ENOENT');
    expect(await run(executor, 'box_read', { path: '/etc/passwd' })).toBe('failed: ENOENT');
    expect(await run(executor, 'box_read', { path: join(process.env.HOME ?? '/root', '.bashrc') })).toBe(
      'failed: ENOENT',
    );
    expect(await run(executor, 'box_write', { path: join(writable, 'out.txt'), text: 'from the box' })).toBe(
      `wrote ${join(writable, 'out.txt')}`,
    );
    expect(readFileSync(join(writable, 'out.txt'), 'utf8')).toBe('from the box');
    expect(await run(executor, 'box_write', { path: join(readable, 'data.txt'), text: 'changed' })).toMatch(
      /^failed: (EROFS|EACCES)$/,
    );
    expect(await run(executor, 'box_write', { path: join(MCP_FIXTURES, 'planted.mjs'), text: 'x' })).toMatch(
      /^failed: (EROFS|EACCES)$/,
    );
    expect(readFileSync(join(readable, 'data.txt'), 'utf8')).toBe('granted data');
  });

  test("its environment is its env and nothing of the host's", async () => {
    process.env.TOOLPOOL_HOST_SECRET = 'host secret';
    try {
      expect(JSON.parse(await run(executor, 'box_env'))).toEqual({ GREETING: 'only this' });
    } finally {
      delete process.env.TOOLPOOL_HOST_SECRET;
    }
  });

  test('it reaches the listed host:port and nothing else', async () => {
    expect(await run(executor, 'box_connect', { host: '127.0.0.1', port: allowed.port })).toBe(
      'got: hello from the allowed port',
    );
    expect(await run(executor, 'box_connect', { host: '127.0.0.1', port: other.port })).toBe('failed: ECONNREFUSED');
    expect(await run(executor, 'box_connect', { host: 'example.com', port: 80 })).toMatch(
      /^failed: (ENOTFOUND|EAI_AGAIN)$/,
    );
  });

  test("it has a PID namespace of its own: the host's processes are neither there nor reachable", async () => {
    const ids = JSON.parse(await run(executor, 'box_ids')) as { pid: number; uid: number; pids: number[] };
    expect(ids.pids.length).toBeLessThanOrEqual(4); // bwrap, toolpool's entry, the server
    expect(ids.pids).not.toContain(process.pid);
    expect(await run(executor, 'box_signal', { pid: process.pid })).toBe('failed: ESRCH');
    // Under a root host the server runs as a uid of its own (no other server's, not nobody's), never as host root.
    if (process.getuid?.() === 0) expect(ids.uid).toBeGreaterThanOrEqual(SANDBOX_UID_BASE);
  });
});

describe('a sandboxed server without a net list', () => {
  test("runs without toolpool's Node entry: still nobody under a root host, its env only, no network, its own PID namespace", async () => {
    const executor = await createExecutor({ mcpServers: { bare: stdioServer({ env: { ONLY: 'this' } }) } });
    try {
      // bubblewrap itself sets PWD, the working folder, for the program it runs.
      const { PWD, ...env } = JSON.parse(await run(executor, 'bare_env')) as Record<string, string>;
      expect(env).toEqual({ ONLY: 'this' });
      expect([undefined, process.cwd()]).toContain(PWD);
      const ids = JSON.parse(await run(executor, 'bare_ids')) as { uid: number; pids: number[] };
      if (process.getuid?.() === 0) expect(ids.uid).toBeGreaterThanOrEqual(SANDBOX_UID_BASE);
      expect(ids.pids).not.toContain(process.pid);
      expect(await run(executor, 'bare_connect', { host: '127.0.0.1', port: 9 })).toMatch(
        /^failed: (ECONNREFUSED|ENETUNREACH)$/,
      );
      expect(await run(executor, 'bare_read', { path: '/etc/passwd' })).toBe('failed: ENOENT');
    } finally {
      await executor.close();
    }
  });
});

describe("a sandboxed server's walls are the sandbox tier's (test/sandbox/walls.test.ts)", () => {
  test('still /proc counters, read-only /proc/sys and /', async () => {
    const executor = await createExecutor({ mcpServers: { walls: stdioServer() } });
    try {
      expect(await run(executor, 'walls_read', { path: '/proc/loadavg' })).toBe('read: 0.00 0.00 0.00 1/1 1\n');
      expect(await run(executor, 'walls_write', { path: '/proc/sys/kernel/domainname', text: 'x' })).toMatch(/EROFS/);
      expect(await run(executor, 'walls_write', { path: '/filler', text: 'x' })).toMatch(/EROFS/);
    } finally {
      await executor.close();
    }
  });
});

describe('permissions a sandbox cannot give', () => {
  test('a fsRead folder nobody can read (a root host) is refused at createExecutor, naming the server', async () => {
    if (process.getuid?.() !== 0) return; // only a root host runs the sandbox as nobody
    const closed = mkdtempSync(join(scratch, 'closed-'));
    await expect(
      createExecutor({ mcpServers: { box: stdioServer({ permissions: { fsRead: [closed] } }) } }),
    ).rejects.toThrow(
      new RegExp(
        `^createExecutor: MCP server "box": isolation "sandbox": permissions.fsRead ${closed} is not readable by the sandbox's users \\(group 65534 or others\\)`,
      ),
    );
  });

  test('permissions with isolation "process" are refused: only the sandbox enforces them', async () => {
    await expect(
      createExecutor({
        mcpServers: { p: { command: process.execPath, isolation: 'process', permissions: { fsRead: [scratch] } } },
      }),
    ).rejects.toThrow(/MCP server "p" has permissions, which only isolation "sandbox" can enforce/);
  });

  test("a malformed net entry is refused with the sandbox tier's message", async () => {
    await expect(
      createExecutor({ mcpServers: { box: stdioServer({ permissions: { net: ['8.8.8.8:53'] } }) } }),
    ).rejects.toThrow(/MCP server "box": permissions.net entry "8.8.8.8:53" names an IP address outside 127.0.0.0\/8/);
  });
});

describe('without a working bubblewrap', () => {
  const path = process.env.PATH;
  afterEach(() => void (process.env.PATH = path));

  test('a stdio server fails with the sandbox tier\'s own error, naming the server and isolation: "process"', async () => {
    process.env.PATH = join(scratch, 'no-such-dir');
    await expect(createExecutor({ mcpServers: { box: stdioServer() } })).rejects.toThrow(
      /^createExecutor: MCP server "box" runs in the sandbox tier by default, and isolation "sandbox" needs bubblewrap \(the bwrap command\), which was not found on PATH.*To run it without a sandbox, give it isolation: "process"\.$/,
    );
  });
});

describe('a server with isolation "process"', () => {
  test('runs in a process group of its own, with its env only', async () => {
    const executor = await createExecutor({
      mcpServers: { proc: stdioServer({ isolation: 'process', env: { ONLY: 'this' } }) },
    });
    try {
      const ids = JSON.parse(await run(executor, 'proc_ids')) as { pid: number; pgrp: number };
      const hostGroup = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[2]);
      expect(ids.pgrp).not.toBe(hostGroup);
      // bubblewrap (its PID namespace) sets PWD, the working folder, and nothing else.
      const { PWD, ...env } = JSON.parse(await run(executor, 'proc_env')) as Record<string, string>;
      expect(env).toEqual({ ONLY: 'this' });
      expect([undefined, process.cwd()]).toContain(PWD);
    } finally {
      await executor.close();
    }
  });
});
