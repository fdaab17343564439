/**
 * The MCP client negotiates the protocol revision: 2026-07-28 with a server
 * that speaks it (an SDK v2 McpServer that refuses the 2025 revisions, over
 * stdio and over Streamable HTTP on 127.0.0.1), the 2025 revisions with an
 * SDK 1.x server (which answers the `server/discover` probe with an error).
 * With each: the tools are listed, a call reports progress in order, an
 * error result stays one, and a call that runs past its timeout is
 * cancelled on the server. Each server reports the revision it was spoken
 * to with (the v2 one: the revision each request claims; the 1.x one: what
 * initialize settled on).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { McpServerConfig } from '../../src/core/mcp-config.ts';
import { createExecutor, type Executor } from '../../src/index.ts';
import { call, recordEvents, textOf } from '../support/executors.ts';
import { eventually } from '../support/leaks.ts';
import {
  MCP_FIXTURES,
  MCP_SERVER,
  MODERN_MCP_SERVER,
  startHttpMcpServer,
  startModernHttpMcpServer,
  type HttpMcpServer,
} from '../support/mcp-servers.ts';

/** The newest 2025 revision, which the SDK v2 client offers in initialize when it falls back. */
const LEGACY = '2025-11-25';
const MODERN = '2026-07-28';

interface Target {
  revision: string;
  server(): Promise<{ config: McpServerConfig; http?: HttpMcpServer }>;
  /** The tool that tells which calls the server saw cancelled, and how to read its answer. */
  cancelled: { tool: string; read(text: string): unknown[] };
}

const modernCancelled = { tool: 'cancelled', read: (text: string) => JSON.parse(text) as unknown[] };
const legacyCancelled = {
  tool: 'seen',
  read: (text: string) =>
    (JSON.parse(text) as { cancelled?: string }[]).flatMap((entry) => (entry.cancelled ? [entry.cancelled] : [])),
};

const TARGETS: Record<string, Target> = {
  '2026-07-28 over stdio': {
    revision: MODERN,
    server: async () => ({
      config: { command: process.execPath, args: [MODERN_MCP_SERVER, '--stdio'], isolation: 'process' },
    }),
    cancelled: modernCancelled,
  },
  '2026-07-28 over HTTP': {
    revision: MODERN,
    server: async () => {
      const http = await startModernHttpMcpServer();
      return { config: { url: http.url }, http };
    },
    cancelled: modernCancelled,
  },
  'an SDK 1.x server over stdio': {
    revision: LEGACY,
    server: async () => ({
      config: { command: process.execPath, args: [MCP_SERVER, '--revision'], isolation: 'process' },
    }),
    cancelled: legacyCancelled,
  },
  'an SDK 1.x server over HTTP': {
    revision: LEGACY,
    server: async () => {
      const http = await startHttpMcpServer({ revision: true });
      return { config: { url: http.url }, http };
    },
    cancelled: legacyCancelled,
  },
};

describe.each(Object.entries(TARGETS))('%s', (_, target) => {
  let executor: Executor;
  let http: HttpMcpServer | undefined;
  const asked: string[] = [];
  beforeAll(async () => {
    const started = await target.server();
    http = started.http;
    executor = await createExecutor({
      mcpServers: { up: started.config },
      onElicit: (request) => {
        asked.push(request.message);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      toolLimits: { up_sleep: { timeoutMs: 300 } },
    });
  }, 60_000);
  afterAll(async () => {
    await executor?.close();
    await http?.close();
  });

  test(`negotiates ${target.revision}; lists, calls with progress, gets an error result`, async () => {
    const names = executor.definitions.map((definition) => definition.name);
    expect(names).toEqual(expect.arrayContaining(['up_revision', 'up_echo', 'up_progress', 'up_fail', 'up_sleep']));
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([
      call('r', 'up_revision', {}),
      call('e', 'up_echo', { text: 'hi' }),
      call('p', 'up_progress', { steps: 3 }),
      call('f', 'up_fail', { why: 'on purpose' }),
    ]);
    expect(results.map((result) => [result.isError, textOf(result)])).toEqual([
      [false, target.revision],
      [false, 'hi'],
      [false, 'done after 3 steps'],
      [true, 'it failed: on purpose'],
    ]);
    const progress = events.filter((event) => event.toolCallId === 'p');
    expect(progress.map((event) => event.type)).toEqual([
      'tool_start',
      'tool_update',
      'tool_update',
      'tool_update',
      'tool_end',
    ]);
    expect(progress.flatMap((event) => (event.type === 'tool_update' ? [event.partial.details] : []))).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  // The 1.x fixture asks nothing; a 2025 server's elicitation/create is the conformance suite's
  // elicitation-sep1034-client-defaults client scenario (test/adapters/mcp-conformance.test.ts).
  test.skipIf(target.revision !== MODERN)(
    "a server's question in input_required goes to onElicit; the answer gets the form's defaults",
    async () => {
      const { results } = await executor.executeBatch([call('q', 'up_ask', {})]);
      expect(asked).toEqual(['Who are you?']);
      expect(JSON.parse(textOf(results[0]!))).toEqual({ action: 'accept', content: { name: 'Ada', color: 'blue' } });
    },
  );

  test('a tools/list_changed reaches the executor: the new tool is listed, tools_changed is told', async () => {
    let changed = 0;
    const stop = executor.on('tools_changed', () => void changed++);
    try {
      const { results } = await executor.executeBatch([call('a', 'up_add_tool', { name: 'late' })]);
      expect(textOf(results[0]!)).toBe('added late');
      const names = await eventually(
        () => executor.definitions.map((definition) => definition.name),
        (list) => list.includes('up_late'),
      );
      expect(names).toContain('up_late');
      expect(changed).toBeGreaterThan(0);
      if (target.revision === MODERN) {
        const { results: late } = await executor.executeBatch([call('l', 'up_late', {})]);
        expect(textOf(late[0]!)).toBe('I am late'); // the 1.x fixture lists an added tool but does not run it
      }
    } finally {
      stop();
    }
  });

  test('a call past its timeout is cancelled on the server, which stays in use', async () => {
    const { results } = await executor.executeBatch([call('s', 'up_sleep', { ms: 30_000 })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toBe(
      target.revision === MODERN
        ? 'Tool timed out after 300 ms (limit timeoutMs); toolpool cancelled the request on MCP server "up". The server still answers (it answered server/discover), so it was left running.'
        : 'Tool timed out after 300 ms (limit timeoutMs); toolpool sent notifications/cancelled to MCP server "up". The server still answers (it answered a ping), so it was left running.',
    );
    let cancelled: unknown[] = [];
    // The cancellation reaches the server on its own (a notification, or a closed stream): look until it has.
    for (let look = 0; look < 50 && !cancelled.includes('sleep'); look++) {
      const { results: seen } = await executor.executeBatch([call('c', `up_${target.cancelled.tool}`, {})]);
      cancelled = [...cancelled, ...target.cancelled.read(textOf(seen[0]!))];
      if (!cancelled.includes('sleep')) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(cancelled).toContain('sleep');
  });
});

test('a 2025-era server that exits at the server/discover probe is started again and sent initialize first', async () => {
  const executor = await createExecutor({
    mcpServers: {
      strict: { command: process.execPath, args: [`${MCP_FIXTURES}/exits-on-probe.mjs`], isolation: 'process' },
    },
  });
  try {
    const { results } = await executor.executeBatch([
      call('r', 'strict_revision', {}),
      call('e', 'strict_echo', { text: 'hi' }),
    ]);
    expect(results.map(textOf)).toEqual([LEGACY, 'hi']);
  } finally {
    await executor.close();
  }
}, 60_000);
