/**
 * An MCP server reached over Streamable HTTP: a real SDK server on
 * 127.0.0.1 (a free port), started and stopped here. Its tools work as a
 * stdio server's do; what differs is that toolpool cannot kill it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createExecutor, type Executor } from '../../src/index.ts';
import { call, recordEvents, textOf, useExecutors } from '../support/executors.ts';
import { eventually } from '../support/leaks.ts';
import { startHttpMcpServer, type HttpMcpServer } from '../support/mcp-servers.ts';

const open = useExecutors();

describe('a Streamable HTTP server', () => {
  let server: HttpMcpServer;
  let executor: Executor;
  beforeAll(async () => {
    server = await startHttpMcpServer({ token: 's3cret' });
    executor = await createExecutor({
      mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer s3cret' } } },
    });
  });
  afterAll(async () => {
    await executor.close();
    await server.close();
  });

  test('its tools are executor tools: validated on the host, progress as tool_update before tool_end, errors and structured content', async () => {
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([
      call('e', 'web_echo', { text: 'hi', times: '2' }),
      call('bad', 'web_echo', { text: 'NO' }),
      call('p', 'web_progress', { steps: 3 }),
      call('f', 'web_fail', { why: 'remote' }),
      call('s', 'web_sum', { a: 1, b: 2 }),
    ]);
    expect(results.map((result) => [result.isError, textOf(result)])).toEqual([
      [false, 'hi hi'],
      [true, expect.stringMatching(/^Validation failed for tool "web_echo"/)],
      [false, 'done after 3 steps'],
      [true, 'it failed: remote'],
      [false, '3'],
    ]);
    expect(results[4]!.details).toEqual({ sum: 3 });
    const forProgress = events.filter((event) => event.toolCallId === 'p').map((event) => event.type);
    expect(forProgress).toEqual(['tool_start', 'tool_update', 'tool_update', 'tool_update', 'tool_end']);
  });

  test('tools/list_changed sent before the answer: the next batch and the definitions have the new tool', async () => {
    await executor.executeBatch([call('a', 'web_add_tool', { name: 'remote_added' })]);
    expect(executor.definitions.map((definition) => definition.name)).toContain('web_remote_added');
  });

  test('close() ends its session', async () => {
    const other = await createExecutor({
      mcpServers: { web: { url: server.url, headers: { Authorization: 'Bearer s3cret' } } },
    });
    const before = server.sessions();
    await other.close();
    expect(
      await eventually(
        () => server.sessions(),
        (count) => count === before - 1,
      ),
    ).toBe(before - 1);
  });
});

describe('a Streamable HTTP server that', () => {
  test('answers 401: createExecutor rejects, naming the server and how to give credentials', async () => {
    const server = await startHttpMcpServer({ token: 's3cret' });
    try {
      await expect(createExecutor({ mcpServers: { web: { url: server.url } } })).rejects.toThrow(
        `createExecutor: MCP server "web" (${server.url}) answered HTTP 401 (Unauthorized): it needs credentials. Give them in headers, e.g. headers: { Authorization: "Bearer <token>" }.`,
      );
    } finally {
      await server.close();
    }
  });

  test('is not there: createExecutor rejects naming it', async () => {
    const server = await startHttpMcpServer();
    const { url } = server;
    await server.close();
    await expect(createExecutor({ mcpServers: { gone: { url } } })).rejects.toThrow(
      /^createExecutor: MCP server "gone" failed to start: .*(ECONNREFUSED|fetch failed)/,
    );
  });

  test('stops answering (no answer to a ping after a timeout): the session is dropped, and the next call opens a new one', async () => {
    const server = await startHttpMcpServer({ mutePings: true });
    try {
      const executor = await open({
        mcpServers: { web: { url: server.url, timeoutMs: 200 } },
        limits: { abortGraceMs: 200 },
      });
      const { results } = await executor.executeBatch([call('s', 'web_stubborn', { ms: 1_000 })]);
      expect(textOf(results[0]!)).toBe(
        'Tool timed out after 200 ms (limit timeoutMs); toolpool sent notifications/cancelled to MCP server "web". ' +
          'It did not answer a ping within 200 ms (abortGraceMs); its session was dropped, and later calls open a new one.',
      );
      const next = await executor.executeBatch([call('e', 'web_echo', { text: 'again' })]);
      expect(textOf(next.results[0]!)).toBe('again');
    } finally {
      await server.close();
    }
  });
});

describe('a Streamable HTTP server that answers too much', () => {
  test('a response longer than the message bound is an error result, read no further; the next call is served', async () => {
    const server = await startHttpMcpServer({});
    try {
      // maxResultBytes 64 KiB: a message may be 2 x that plus 1 MiB, as a stdio server's line.
      const executor = await open({
        mcpServers: { web: { url: server.url } },
        limits: { maxResultBytes: 64 * 1024, timeoutMs: 20_000 },
      });
      const started = Date.now();
      const { results } = await executor.executeBatch([call('big', 'web_big', { size: 4 * 1024 * 1024 })]);
      expect(results[0]!.isError).toBe(true);
      expect(textOf(results[0]!)).toMatch(
        /^Tool crashed: MCP server "web" sent a message longer than \d+ bytes, so its session was dropped; later calls open a new one\.$/,
      );
      expect(Date.now() - started).toBeLessThan(10_000); // not the call's timeout
      const next = await executor.executeBatch([call('ok', 'web_echo', { text: 'after' })]);
      expect(textOf(next.results[0]!)).toBe('after');
      const fits = await executor.executeBatch([call('fits', 'web_big', { size: 32 * 1024 })]);
      expect(textOf(fits.results[0]!)).toHaveLength(32 * 1024);
    } finally {
      await server.close();
    }
  });
});
