/**
 * MCP servers' tools as executor tools, against a real server written with
 * the official SDK (test/fixtures/mcp), in the sandbox tier (the default):
 * names and what the model sees, validation on the host before the server
 * is reached, progress in order, error results, structured content, and a
 * tool list that changes while the executor runs.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { Type } from '@sinclair/typebox';
import { Agent, createExecutor, defineTool, scriptedModel, type Executor, type ToolEvent } from '../../src/index.ts';
import { call, recordEvents, textOf } from '../support/executors.ts';
import { captureWarnings } from '../support/warnings.ts';
import { stdioServer } from '../support/mcp-servers.ts';

let executor: Executor;
let warnings: string[];
beforeAll(async () => {
  warnings = captureWarnings();
  executor = await createExecutor({ mcpServers: { srv: stdioServer({}, ['--lookahead']) } });
  vi.restoreAllMocks();
});
afterAll(() => executor.close());

/** What the test server saw of tool calls since the last look (its own `seen` tool). */
async function seenByServer(): Promise<unknown[]> {
  const { results } = await executor.executeBatch([call('seen', 'srv_seen')]);
  return JSON.parse(textOf(results[0]!)) as unknown[];
}

describe('the tools of an MCP server', () => {
  test("each is the executor tool SERVER_tool, with the server's description and input schema (with its $schema, as written) for the model", () => {
    const names = executor.definitions.map((definition) => definition.name);
    expect(names).toEqual(expect.arrayContaining(['srv_echo', 'srv_progress', 'srv_sum', 'srv_fail', 'srv_add_tool']));
    const echo = executor.definitions.find((definition) => definition.name === 'srv_echo')!;
    expect(echo.description).toBe('Repeat a lower-case word');
    expect(echo.parameters).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { text: { type: 'string', pattern: '^[a-z]+$' }, times: { type: 'integer', minimum: 1, maximum: 5 } },
      required: ['text'],
      additionalProperties: false,
    });
    expect(executor.labels.get('srv_echo')).toBe('Echo');
    expect(executor.metadata.get('srv_echo')).toEqual({
      annotations: { title: 'Echo it', readOnlyHint: true, openWorldHint: false },
      needsApproval: 'never',
    });
    expect(executor.metadata.get('srv_sum')?.outputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { sum: { type: 'number' } },
      required: ['sum'],
      additionalProperties: false,
    });
  });

  test('a schema pattern that needs backtracking is matched with RE2 on the host, so that tool is left out with a warning', () => {
    expect(executor.definitions.map((definition) => definition.name)).not.toContain('srv_lookahead');
    expect(warnings.join('\n')).toMatch(
      /MCP server "srv": its tool "lookahead" is left out: .*cannot run in linear time/,
    );
  });

  test('arguments are validated and coerced on the host: an invalid call never reaches the server', async () => {
    await seenByServer();
    const { results } = await executor.executeBatch([
      call('ok', 'srv_echo', { text: 'hi', times: '3' }),
      call('bad', 'srv_echo', { text: 'HI', times: 9 }),
      call('extra', 'srv_echo', '{"text":"hi","loud":true}'),
    ]);
    expect(textOf(results[0]!)).toBe('hi hi hi');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(
      /^Validation failed for tool "srv_echo":\n {2}- text: must match pattern "\^\[a-z\]\+\$"\n {2}- times: must be <= 5/,
    );
    expect(textOf(results[2]!)).toMatch(/loud: is not an allowed property/);
    // The server got the coerced number, and neither invalid call.
    expect(await seenByServer()).toEqual([{ tool: 'echo', args: { text: 'hi', times: 3 } }]);
  });

  test("hooks, events and source order are those of toolpool's own tools; an unknown tool is an error result", async () => {
    const order: string[] = [];
    const hooked = await createExecutor({
      mcpServers: { srv: stdioServer({ isolation: 'process' }) },
      beforeToolCall: ({ toolCall }) =>
        toolCall.id === 'blocked' ? { block: true, reason: 'not this one' } : undefined,
      afterToolCall: ({ toolCall, result }) => ({
        content: [{ type: 'text', text: `${toolCall.id}: ${textOf(result)}` }],
      }),
    });
    try {
      hooked.subscribe((event) => void order.push(`${event.type}:${event.toolCallId}`));
      const { results } = await hooked.executeBatch([
        call('slow', 'srv_sleep', { ms: 150 }),
        call('fast', 'srv_echo', { text: 'a' }),
        call('blocked', 'srv_echo', { text: 'b' }),
        call('unknown', 'srv_nope'),
      ]);
      expect(results.map((result) => textOf(result))).toEqual([
        'slow: slept 150 ms',
        'fast: a',
        // afterToolCall sees only calls that ran.
        'not this one',
        expect.stringMatching(/^Tool "srv_nope" not found\. Available tools: .*srv_echo/),
      ]);
      expect(results.map((result) => result.isError)).toEqual([false, false, true, true]);
      expect(order).toEqual([
        'tool_start:slow',
        'tool_start:fast',
        'tool_start:blocked',
        'tool_start:unknown',
        'tool_end:slow',
        'tool_end:fast',
        'tool_end:blocked',
        'tool_end:unknown',
      ]);
    } finally {
      await hooked.close();
    }
  });

  test('notifications/progress become tool_update events while the call runs, in order, before its tool_end', async () => {
    const events: Array<ToolEvent & { at: number }> = [];
    const unsubscribe = executor.subscribe((event) => void events.push({ ...event, at: performance.now() }));
    const { results } = await executor.executeBatch([call('p', 'srv_progress', { steps: 4, delayMs: 40 })]);
    unsubscribe();
    expect(textOf(results[0]!)).toBe('done after 4 steps');
    const updates = events.filter((event) => event.type === 'tool_update');
    expect(updates.map((event) => event.partial)).toEqual(
      [1, 2, 3, 4].map((step) => ({
        content: [{ type: 'text', text: `step ${step}` }],
        details: { progress: step, total: 4, message: `step ${step}` },
      })),
    );
    // Live: the first update came well before the end (the server waits 40 ms between steps).
    const end = events.find((event) => event.type === 'tool_end')!;
    expect(end.at - updates[0]!.at).toBeGreaterThan(60);
    expect(events.map((event) => event.type)).toEqual([
      'tool_start',
      'tool_update',
      'tool_update',
      'tool_update',
      'tool_update',
      'tool_end',
    ]);
  });

  test("isError is an error result with the server's text; structuredContent is the details, checked against the outputSchema", async () => {
    const { results } = await executor.executeBatch([
      call('f', 'srv_fail', { why: 'disk full' }),
      call('s', 'srv_sum', { a: 2, b: '3' }),
      call('b', 'srv_sum', { a: 2, b: 3, broken: true }),
    ]);
    expect(results[0]).toMatchObject({ isError: true, content: [{ type: 'text', text: 'it failed: disk full' }] });
    expect(results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: '5' }], details: { sum: 5 } });
    expect(results[2]!.isError).toBe(true);
    expect(textOf(results[2]!)).toMatch(
      /^Tool "srv_sum" returned details that do not match its outputSchema:\n {2}- sum: must be number/,
    );
  });

  test('tools/list_changed: the very next batch and executor.definitions see the new list', async () => {
    const before = executor.definitions;
    expect(before.map((definition) => definition.name)).not.toContain('srv_late');
    const { results } = await executor.executeBatch([call('add', 'srv_add_tool', { name: 'late' })]);
    expect(textOf(results[0]!)).toBe('added late');
    // The server announced the change before it answered: the list is new by the time the result is back.
    expect(executor.definitions.map((definition) => definition.name)).toContain('srv_late');
    expect(executor.definitions.find((definition) => definition.name === 'srv_late')?.description).toBe(
      'Added at run time: late',
    );
    const next = await executor.executeBatch([call('late', 'srv_late')]);
    expect(next.results[0]!.isError).toBe(true); // the fixture has no code for it: the server's own error
    expect(textOf(next.results[0]!)).toBe('unknown tool late');
  });

  test('a tool whose executor name would be longer than models accept is left out with a warning', async () => {
    const long = 'a'.repeat(70);
    const captured = captureWarnings();
    try {
      await executor.executeBatch([call('add', 'srv_add_tool', { name: long })]);
    } finally {
      vi.restoreAllMocks();
    }
    expect(executor.definitions.map((definition) => definition.name)).not.toContain(`srv_${long}`);
    expect(captured.join('\n')).toContain(
      `MCP server "srv": its tool "${long}" is left out: its executor name "srv_${long}" is not 1-64 letters, digits, "_" or "-"`,
    );
  });

  test('an Agent shows the model the new list on its very next turn', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'a', name: 'srv_add_tool', arguments: { name: 'agent_added' } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({ model, executor });
    await agent.prompt('add one');
    const [first, second] = model.requests.map((request) => request.tools.map((tool) => tool.name));
    expect(first).not.toContain('srv_agent_added');
    expect(second).toContain('srv_agent_added');
  });
});

describe('one chunk holding the last progress notification and the result', () => {
  test('every update is delivered, in order, before tool_end', async () => {
    // --coalesce: the server writes everything it sends in one turn of its event loop at once.
    const coalesced = await createExecutor({ mcpServers: { burst: stdioServer({}, ['--coalesce']) } });
    try {
      const events = recordEvents(coalesced);
      for (let round = 0; round < 5; round++) {
        events.length = 0;
        const { results } = await coalesced.executeBatch([call(`p${round}`, 'burst_progress', { steps: 3 })]);
        expect(textOf(results[0]!)).toBe('done after 3 steps');
        expect(
          events.map((event) =>
            event.type === 'tool_update'
              ? `update ${(event.partial.details as { progress: number }).progress}`
              : event.type,
          ),
        ).toEqual(['tool_start', 'update 1', 'update 2', 'update 3', 'tool_end']);
      }
    } finally {
      await coalesced.close();
    }
  });
});

describe('a server that comes to list a name the executor already has', () => {
  test('its tool is left out, the executor keeps its own, and a warning names both once', async () => {
    const own = defineTool({
      name: 'own_extra',
      description: "The executor's own tool",
      parameters: Type.Object({}),
      execute: () => ({ content: [{ type: 'text', text: "the executor's own" }] }),
    });
    const shadowing = await createExecutor({ tools: [own], mcpServers: { own: stdioServer() } });
    const captured = captureWarnings();
    try {
      await shadowing.executeBatch([call('add', 'own_add_tool', { name: 'extra' })]);
      await shadowing.executeBatch([call('add', 'own_add_tool', { name: 'other' })]); // a second change: said once
      expect(shadowing.definitions.filter((definition) => definition.name === 'own_extra')).toHaveLength(1);
      const { results } = await shadowing.executeBatch([call('1', 'own_extra')]);
      expect(textOf(results[0]!)).toBe("the executor's own");
    } finally {
      vi.restoreAllMocks();
      await shadowing.close();
    }
    const said = captured.filter((warning) => warning.includes('"own_extra"'));
    expect(said).toEqual([
      'MCP server "own" (tool "extra") now lists a tool named "own_extra", which inline tool "own_extra" already has: that server tool is left out. Rename the tool or the server.',
    ]);
  });
});
