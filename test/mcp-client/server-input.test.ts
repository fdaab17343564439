/**
 * What an MCP server sends is untrusted (an oversized line, a result over
 * maxResultBytes, stdout noise, a __proto__ key), an idle server does not
 * keep the host alive, and each way a start fails is reported by
 * createExecutor, naming the server.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { createExecutor, type ExecutorOptions } from '../../src/index.ts';
import { call, textOf, useExecutors } from '../support/executors.ts';
import { eventually, processesWith } from '../support/leaks.ts';
import { MCP_FIXTURES, stdioServer } from '../support/mcp-servers.ts';

const open = useExecutors();

describe('what a server sends is untrusted', () => {
  test('a message longer than the line bound is not buffered: the server is killed, its calls say why, the next call restarts it', async () => {
    const executor = await open({
      mcpServers: { srv: stdioServer({ isolation: 'process' }) },
      limits: { maxResultBytes: 1_000 },
    });
    const { results } = await executor.executeBatch([
      call('f', 'srv_flood', { size: 4 << 20 }),
      call('s', 'srv_sleep', { ms: 5_000 }),
    ]);
    for (const result of results) {
      expect(textOf(result)).toMatch(
        /^Tool crashed: MCP server "srv" sent a message longer than \d+ bytes, so it was killed; it is restarted for later calls\.$/,
      );
    }
    expect(textOf((await executor.executeBatch([call('e', 'srv_echo', { text: 'ok' })])).results[0]!)).toBe('ok');
  });

  test('a result over maxResultBytes is an error result naming the limit; a log line on stdout is skipped', async () => {
    const executor = await open({
      mcpServers: { srv: stdioServer({ isolation: 'process' }) },
      toolLimits: { srv_big: { maxResultBytes: 10_000 } },
    });
    const { results } = await executor.executeBatch([
      call('b', 'srv_big', { size: 20_000 }),
      call('n', 'srv_noise'),
      call('ok', 'srv_big', { size: 100 }),
    ]);
    expect(textOf(results[0]!)).toMatch(/^Tool result is \d+ bytes, over the limit maxResultBytes \(10000 bytes\)\.$/);
    expect(textOf(results[1]!)).toBe('quiet now');
    expect(textOf(results[2]!)).toBe('x'.repeat(100));
  });

  test('a __proto__ key in structured content stays data: no prototype of the host changes', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    const { results } = await executor.executeBatch([call('p', 'srv_proto')]);
    expect(results[0]!.isError).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(results[0]!.details)).toBe(Object.prototype);
    expect((results[0]!.details as Record<string, unknown>).plain).toBe(1);
  });

  test('toolLimits name MCP tools by their executor name', async () => {
    const executor = await open({
      mcpServers: { srv: stdioServer({ isolation: 'process' }) },
      toolLimits: { srv_sleep: { timeoutMs: 150 } },
    });
    const { results } = await executor.executeBatch([call('s', 'srv_sleep', { ms: 3_000 })]);
    expect(textOf(results[0]!)).toMatch(/^Tool timed out after 150 ms \(limit timeoutMs\)/);
  });
});

describe('a host that forgets close()', () => {
  test('still exits by itself: an idle server does not hold its event loop', async () => {
    const script = `${MCP_FIXTURES}/host-forgets-close.ts`;
    const started = Date.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', script, `${MCP_FIXTURES}/server.mjs`],
        { timeout: 20_000 },
        (error, out) => (error ? reject(error) : resolve(out)),
      );
    });
    expect(stdout).toBe('[{"type":"text","text":"done"}]\n');
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('createExecutor rejects, naming the server', () => {
  const reject = (options: ExecutorOptions) => expect(createExecutor(options)).rejects;

  test('a command that does not exist', async () => {
    await reject({ mcpServers: { ghost: { command: 'toolpool-no-such-command', isolation: 'process' } } }).toThrow(
      'createExecutor: MCP server "ghost": the command "toolpool-no-such-command" was not found on PATH. Give its full path, or install it.',
    );
    await reject({ mcpServers: { ghost: { command: './no/such/server', isolation: 'process' } } }).toThrow(
      'createExecutor: MCP server "ghost": the command "./no/such/server" does not exist or is not executable.',
    );
  });

  test.each(['process', 'sandbox'] as const)(
    '%s: a server that exits at start, with its exit code and the end of its stderr',
    async (isolation) => {
      await reject({
        mcpServers: { early: stdioServer({ isolation, args: [`${MCP_FIXTURES}/exits-at-start.mjs`] }) },
      }).toThrow(
        'createExecutor: MCP server "early" exited (exit code 3) before it answered initialize. The end of its stderr: boom: the server found no config file',
      );
    },
  );

  test('a server that never answers initialize, within workers.loadTimeoutMs; it is stopped', async () => {
    const tag = `--tag=${randomUUID()}`;
    const started = Date.now();
    await reject({
      mcpServers: { mute: stdioServer({ isolation: 'process', args: [`${MCP_FIXTURES}/never-initializes.mjs`, tag] }) },
      workers: { loadTimeoutMs: 500 },
    }).toThrow(
      /^createExecutor: MCP server "mute" did not answer initialize within 500 ms \(workers.loadTimeoutMs\), so it was stopped\./,
    );
    expect(Date.now() - started).toBeLessThan(10_000); // 500 ms and a stop; generous for a loaded machine
    expect(
      await eventually(
        () => processesWith(tag),
        (pids) => pids.length === 0,
      ),
    ).toEqual([]);
  });

  test('a misspelt key, with the known ones', async () => {
    await reject({ mcpServers: { srv: { comand: 'node' } as never } }).toThrow(
      'createExecutor: unknown option "mcpServers.srv.comand"; did you mean "mcpServers.srv.command"? the known options of mcpServers.srv are command, args, env, cwd, isolation, permissions, timeoutMs, needsApproval, url, headers',
    );
    await reject({ mcpServers: { srv: { command: 'node', permissions: { fsread: [] } } as never } }).toThrow(
      'unknown option "mcpServers.srv.permissions.fsread"; did you mean "mcpServers.srv.permissions.fsRead"? the known options of mcpServers.srv.permissions are fsRead, fsWrite, net',
    );
  });

  test('a server with both command and url, neither, keys of the other kind, or a name no tool name can carry', async () => {
    await reject({ mcpServers: { srv: { command: 'node', url: 'http://127.0.0.1:1/mcp' } as never } }).toThrow(
      'MCP server "srv" has both command and url; give one.',
    );
    await reject({ mcpServers: { srv: {} as never } }).toThrow(
      'MCP server "srv" needs a command (a server toolpool starts) or a url (a Streamable HTTP server).',
    );
    await reject({ mcpServers: { srv: { url: 'http://127.0.0.1:1/mcp', env: {} } as never } }).toThrow(
      'MCP server "srv" has a url, so env does not apply',
    );
    await reject({ mcpServers: { srv: { url: 'ftp://example.com/mcp' } } }).toThrow(
      'MCP server "srv" has url "ftp://example.com/mcp", which is not an http:// or https:// URL.',
    );
    await reject({ mcpServers: { 'my server': { command: 'node' } } }).toThrow(
      'MCP server name "my server" must be 1-48 letters, digits, "_" or "-"',
    );
  });

  test('neither tools nor mcpServers', async () => {
    await reject({} as never).toThrow(
      'createExecutor: option tools must be an array of module paths, file URLs or defineTool() objects (it is missing), or give mcpServers',
    );
  });
});
