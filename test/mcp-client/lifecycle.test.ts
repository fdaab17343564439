/**
 * An MCP server's lifetime under toolpool: timeouts and aborts (cancelled,
 * then a ping decides whether it is blocked), kills that take its whole
 * process group or sandbox along, crashes named by their exit code,
 * restarts with a bound, and close() leaving nothing behind. What a server
 * sends and how its start fails: server-input.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { MAX_RESTARTS_IN_A_ROW } from '../../src/mcp-client/supervisor.ts';
import { createExecutor } from '../../src/index.ts';
import { call, textOf, useExecutors } from '../support/executors.ts';
import { eventually, processesWith } from '../support/leaks.ts';
import { stdioServer } from '../support/mcp-servers.ts';

const open = useExecutors();

/** The server's record of calls and cancellations since the last look. */
async function seen(executor: Awaited<ReturnType<typeof open>>, tool: string): Promise<unknown[]> {
  const { results } = await executor.executeBatch([call('seen', tool)]);
  return JSON.parse(textOf(results[0]!)) as unknown[];
}

describe('a call that outlives its time', () => {
  test.each(['process', 'sandbox'] as const)(
    '%s: a blocked server (no answer to the ping) is killed with the grandchild it started, and restarted for the next call',
    async (isolation) => {
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
      expect(Date.now() - started).toBeLessThan(8_000); // far below a blocked call's own end; generous for a loaded machine
      expect(
        await eventually(
          () => processesWith(marker),
          (pids) => pids.length === 0,
        ),
      ).toEqual([]);
      const next = await executor.executeBatch([call('e', 'srv_echo', { text: 'again' })]);
      expect(textOf(next.results[0]!)).toBe('again');
    },
  );

  test('a server that ignores the cancellation but still answers is left running; the call says so', async () => {
    const executor = await open({
      mcpServers: { srv: stdioServer({ isolation: 'process', timeoutMs: 200 }) },
      limits: { abortGraceMs: 500 },
    });
    await seen(executor, 'srv_seen');
    const { results } = await executor.executeBatch([call('s', 'srv_stubborn', { ms: 1_500 })]);
    expect(textOf(results[0]!)).toBe(
      'Tool timed out after 200 ms (limit timeoutMs); toolpool sent notifications/cancelled to MCP server "srv". The server still answers (it answered a ping), so it was left running.',
    );
    // The server got notifications/cancelled for the call (its handler's signal fired, or had fired before it ran:
    // a loaded machine once left the server unscheduled until the call, its cancellation and the ping came in one
    // chunk). toolpool writes the cancellation before the ping, and the server handles both in that order.
    expect(await seen(executor, 'srv_seen')).toEqual([
      { tool: 'stubborn', args: { ms: 1_500 } },
      { cancelled: 'stubborn' },
    ]);
  });

  test("the caller's abort cancels the call the same way", async () => {
    const executor = await open({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    await seen(executor, 'srv_seen');
    const controller = new AbortController();
    // Aborted once the server has the call (its progress says so): a timed abort could come before it was sent.
    const { results } = await executor.executeBatch([call('s', 'srv_sleep', { ms: 5_000, announce: true })], {
      signal: controller.signal,
      onEvent: (event) => void (event.type === 'tool_update' && controller.abort()),
    });
    expect(textOf(results[0]!)).toMatch(
      /^Tool call aborted; toolpool sent notifications\/cancelled to MCP server "srv"\. The server still answers/,
    );
    expect(await seen(executor, 'srv_seen')).toEqual([
      { tool: 'sleep', args: { ms: 5_000, announce: true } },
      { cancelled: 'sleep' },
    ]);
  });
});

describe('a server that crashes', () => {
  test('mid-call: that call and its other calls in flight get an error naming the exit code; the next call restarts it', async () => {
    const executor = await open({ mcpServers: { srv: stdioServer() } });
    const { results } = await executor.executeBatch([
      call('c', 'srv_crash', { code: 7, afterMs: 100 }),
      call('s', 'srv_sleep', { ms: 5_000 }),
    ]);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Tool crashed: MCP server "srv" exited \(exit code 7\) during the call; toolpool restarts it for later calls\./,
      );
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
    for (let round = 0; round <= MAX_RESTARTS_IN_A_ROW; round++) {
      await executor.executeBatch([call(`c${round}`, 'srv_crash', { code: 9 })]);
      const { results } = await executor.executeBatch([call(`e${round}`, 'srv_echo', { text: 'fine' })]);
      expect(textOf(results[0]!)).toBe('fine');
    }
  });
});

describe('close()', () => {
  test('ends every server and what it started (in its group, in a session of its own, in a sandbox)', async () => {
    const tag = `--tag=${randomUUID()}`;
    const markers = {
      grouped: `grouped-${randomUUID()}`,
      detached: `detached-${randomUUID()}`,
      sandboxed: `sandboxed-${randomUUID()}`,
    };
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
    for (const marker of [tag, ...Object.values(markers)])
      expect(
        await eventually(
          () => processesWith(marker),
          (pids) => pids.length === 0,
        ),
      ).toEqual([]);
  });

  test('a call still running ends with an error result saying the executor was closed', async () => {
    const executor = await createExecutor({ mcpServers: { srv: stdioServer({ isolation: 'process' }) } });
    const running = executor.executeBatch([call('s', 'srv_stubborn', { ms: 10_000 })]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = Date.now();
    await executor.close();
    expect(Date.now() - closing).toBeLessThan(8_000); // the call would run 10 s; generous for a loaded machine
    expect(textOf((await running).results[0]!)).toBe('Tool call cancelled: the executor was closed.');
  });
});
