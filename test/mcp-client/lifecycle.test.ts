/**
 * An MCP server's lifetime under toolpool: timeouts and aborts (cancelled,
 * then a ping decides whether it is blocked), kills that take its whole
 * process group or sandbox along, crashes named by their exit code,
 * restarts with a bound, close() leaving nothing behind, and the start
 * failures createExecutor reports.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { MAX_RESTARTS_IN_A_ROW } from '../../src/mcp-client/supervisor.ts';
import { createExecutor, type ExecutorOptions } from '../../src/index.ts';
import { call, textOf, useExecutors } from '../support/executors.ts';
import { eventually, processesWith } from '../support/leaks.ts';
import { MCP_FIXTURES, stdioServer } from '../support/mcp-servers.ts';

const open = useExecutors();

/** The server's record of calls and cancellations since the last look. */
async function seen(executor: Awaited<ReturnType<typeof open>>, tool: string): Promise<unknown[]> {
  const { results } = await executor.executeBatch([call('seen', tool)]);
  return JSON.parse(textOf(results[0]!)) as unknown[];
}

describe('a call that outlives its time', () => {
  test.each(['process', 'sandbox'] as const)('%s: a blocked server (no answer to the ping) is killed with the grandchild it started, and restarted for the next call', async (isolation) => {
    const marker = `toolpool-grandchild-${randomUUID()}`;
    const executor = await open({
      mcpServers: { srv: stdioServer({ isolation, timeoutMs: 300 }) },
      limits: { abortGraceMs: 300 },
    });
    const started = Date.now();
    const { results } = await executor.executeBatch([call('b', 'srv_block', { marker })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toBe(
      'Tool timed out after 300 ms (limit timeoutMs); toolpool sent notifications/cancelled to MCP server "srv". ' +
        'It did not answer a ping within 300 ms (abortGraceMs), so it was killed with everything it started, and is restarted for later calls.',
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await eventually(() => processesWith(marker), (pids) => pids.length === 0)).toEqual([]);
    const next = await executor.executeBatch([call('e', 'srv_echo', { text: 'again' })]);
    expect(textOf(next.results[0]!)).toBe('again');
  });

  test('a server that ignores the cancellation but still answers is left running; the call says so', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process', timeoutMs: 200 }) }, limits: { abortGraceMs: 500 } });
    await seen(executor, 'srv_seen');
    const { results } = await executor.executeBatch([call('s', 'srv_stubborn', { ms: 1_500 })]);
    expect(textOf(results[0]!)).toBe(
      'Tool timed out after 200 ms (limit timeoutMs); toolpool sent notifications/cancelled to MCP server "srv". The server still answers (it answered a ping), so it was left running.',
    );
    // The server got notifications/cancelled for the call (its handler's signal fired).
    expect(await seen(executor, 'srv_seen')).toEqual([{ tool: 'stubborn', args: { ms: 1_500 } }, { cancelled: 'stubborn' }]);
  });

  test('the caller\'s abort cancels the call the same way', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    await seen(executor, 'srv_seen');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const { results } = await executor.executeBatch([call('s', 'srv_sleep', { ms: 5_000 })], { signal: controller.signal });
    expect(textOf(results[0]!)).toMatch(/^Tool call aborted; toolpool sent notifications\/cancelled to MCP server "srv"\. The server still answers/);
    expect(await seen(executor, 'srv_seen')).toEqual([{ tool: 'sleep', args: { ms: 5_000 } }, { cancelled: 'sleep' }]);
  });
});

describe('a server that crashes', () => {
  test('mid-call: that call and its other calls in flight get an error naming the exit code; the next call restarts it', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer() } });
    const { results } = await executor.executeBatch([call('c', 'srv_crash', { code: 7, afterMs: 100 }), call('s', 'srv_sleep', { ms: 5_000 })]);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Tool crashed: MCP server "srv" exited \(exit code 7\) during the call; toolpool restarts it for later calls\./);
    }
    const next = await executor.executeBatch([call('e', 'srv_echo', { text: 'back' })]);
    expect(textOf(next.results[0]!)).toBe('back');
  });

  test(`is restarted at most ${MAX_RESTARTS_IN_A_ROW} times in a row, then its calls say toolpool gave up`, async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    for (let crash = 0; crash <= MAX_RESTARTS_IN_A_ROW; crash++) {
      const { results } = await executor.executeBatch([call(`c${crash}`, 'srv_crash', { code: 9 })]);
      expect(textOf(results[0]!)).toMatch(/exited \(exit code 9\) during the call/);
    }
    const { results } = await executor.executeBatch([call('e', 'srv_echo', { text: 'hello' })]);
    expect(textOf(results[0]!)).toBe(
      `MCP server "srv" failed ${MAX_RESTARTS_IN_A_ROW + 1} times in a row (last: it exited (exit code 9)), so toolpool no longer restarts it. Fix the server, then create the executor again.`,
    );
  });

  test('an answered call ends the run of failures', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    for (let round = 0; round < MAX_RESTARTS_IN_A_ROW + 2; round++) {
      await executor.executeBatch([call(`c${round}`, 'srv_crash', { code: 9 })]);
      const { results } = await executor.executeBatch([call(`e${round}`, 'srv_echo', { text: 'fine' })]);
      expect(textOf(results[0]!)).toBe('fine');
    }
  });
});

describe('close()', () => {
  test('ends every server and what it started (in its group, in a session of its own, in a sandbox)', async () => {
    const tag = `--tag=${randomUUID()}`;
    const markers = { grouped: `grouped-${randomUUID()}`, detached: `detached-${randomUUID()}`, sandboxed: `sandboxed-${randomUUID()}` };
    const executor = await createExecutor({
      mcpServers: { proc: stdioServer({ isolation: 'process' }, [tag]), box: stdioServer({}, [tag]) },
    });
    await executor.executeBatch([
      call('1', 'proc_spawn_child', { marker: markers.grouped }),
      call('2', 'proc_spawn_child', { marker: markers.detached, detached: true }),
      call('3', 'box_spawn_child', { marker: markers.sandboxed, detached: true }),
    ]);
    for (const marker of [tag, ...Object.values(markers)]) expect(processesWith(marker).length).toBeGreaterThan(0);
    await executor.close();
    for (const marker of [tag, ...Object.values(markers)]) expect(await eventually(() => processesWith(marker), (pids) => pids.length === 0)).toEqual([]);
  });

  test('a call still running ends with an error result saying the executor was closed', async () => {
    const executor = await createExecutor({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    const running = executor.executeBatch([call('s', 'srv_stubborn', { ms: 10_000 })]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = Date.now();
    await executor.close();
    expect(Date.now() - closing).toBeLessThan(3_000);
    expect(textOf((await running).results[0]!)).toBe('Tool call cancelled: the executor was closed.');
  });
});

describe('what a server sends is untrusted', () => {
  test('a message longer than the line bound is not buffered: the server is killed, its calls say why, the next call restarts it', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) }, limits: { maxResultBytes: 1_000 } });
    const { results } = await executor.executeBatch([call('f', 'srv_flood', { size: 4 << 20 }), call('s', 'srv_sleep', { ms: 5_000 })]);
    for (const result of results) {
      expect(textOf(result)).toMatch(/^Tool crashed: MCP server "srv" sent a message longer than \d+ bytes, so it was killed; it is restarted for later calls\.$/);
    }
    expect(textOf((await executor.executeBatch([call('e', 'srv_echo', { text: 'ok' })])).results[0]!)).toBe('ok');
  });

  test('a result over maxResultBytes is an error result naming the limit; a log line on stdout is skipped', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) }, toolLimits: { srv_big: { maxResultBytes: 10_000 } } });
    const { results } = await executor.executeBatch([call('b', 'srv_big', { size: 20_000 }), call('n', 'srv_noise'), call('ok', 'srv_big', { size: 100 })]);
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
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) }, toolLimits: { srv_sleep: { timeoutMs: 150 } } });
    const { results } = await executor.executeBatch([call('s', 'srv_sleep', { ms: 3_000 })]);
    expect(textOf(results[0]!)).toMatch(/^Tool timed out after 150 ms \(limit timeoutMs\)/);
  });
});

describe('a host that forgets close()', () => {
  test('still exits by itself: an idle server does not hold its event loop', async () => {
    const script = `${MCP_FIXTURES}/host-forgets-close.ts`;
    const started = Date.now();
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', script, `${MCP_FIXTURES}/server.mjs`], { timeout: 20_000 }, (error, out) => (error ? reject(error) : resolve(out)));
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

  test.each(['process', 'sandbox'] as const)('%s: a server that exits at start, with its exit code and the end of its stderr', async (isolation) => {
    await reject({ mcpServers: { early: stdioServer({ isolation, args: [`${MCP_FIXTURES}/exits-at-start.mjs`] }) } }).toThrow(
      'createExecutor: MCP server "early" exited (exit code 3) before it answered initialize. The end of its stderr: boom: the server found no config file',
    );
  });

  test('a server that never answers initialize, within workers.loadTimeoutMs; it is stopped', async () => {
    const tag = `--tag=${randomUUID()}`;
    const started = Date.now();
    await reject({
      mcpServers: { mute: stdioServer({ isolation: 'process', args: [`${MCP_FIXTURES}/never-initializes.mjs`, tag] }) },
      workers: { loadTimeoutMs: 500 },
    }).toThrow(/^createExecutor: MCP server "mute" did not answer initialize within 500 ms \(workers.loadTimeoutMs\), so it was stopped\./);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await eventually(() => processesWith(tag), (pids) => pids.length === 0)).toEqual([]);
  });

  test('a misspelt key, with the known ones', async () => {
    await reject({ mcpServers: { srv: { comand: 'node' } as never } }).toThrow(
      'createExecutor: unknown option "mcpServers.srv.comand"; the known options of mcpServers.srv are command, args, env, cwd, isolation, permissions, timeoutMs, needsApproval, url, headers',
    );
    await reject({ mcpServers: { srv: { command: 'node', permissions: { fsread: [] } } as never } }).toThrow(
      'unknown option "mcpServers.srv.permissions.fsread"; the known options of mcpServers.srv.permissions are fsRead, fsWrite, net',
    );
  });

  test('a server with both command and url, neither, keys of the other kind, or a name no tool name can carry', async () => {
    await reject({ mcpServers: { srv: { command: 'node', url: 'http://127.0.0.1:1/mcp' } as never } }).toThrow('MCP server "srv" has both command and url; give one.');
    await reject({ mcpServers: { srv: {} as never } }).toThrow('MCP server "srv" needs a command (a server toolpool starts) or a url (a Streamable HTTP server).');
    await reject({ mcpServers: { srv: { url: 'http://127.0.0.1:1/mcp', env: {} } as never } }).toThrow('MCP server "srv" has a url, so env does not apply');
    await reject({ mcpServers: { srv: { url: 'ftp://example.com/mcp' } } }).toThrow('MCP server "srv" has url "ftp://example.com/mcp", which is not an http:// or https:// URL.');
    await reject({ mcpServers: { 'my server': { command: 'node' } } }).toThrow('MCP server name "my server" must be 1-48 letters, digits, "_" or "-"');
  });

  test('neither tools nor mcpServers', async () => {
    await reject({} as never).toThrow('createExecutor: option tools must be an array of module paths, file URLs or defineTool() objects (it is missing), or give mcpServers');
  });
});
