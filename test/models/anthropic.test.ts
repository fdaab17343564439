import { Type } from '@sinclair/typebox';
import { EVERY_TYPE } from '../fixtures/content/every-type.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import type { Model, ModelStreamEvent } from '../../src/core/model.ts';
import { request, run } from '../support/model-run.ts';
import { anthropicModel } from '../../src/models/anthropic.ts';
import {
  anthropicError,
  anthropicEvents as e,
  anthropicTextReply,
  startAnthropicWireServer,
  type AnthropicEvent,
  type AnthropicWireServer,
} from '../support/anthropic-wire-server.ts';

let server: AnthropicWireServer;

beforeAll(async () => {
  server = await startAnthropicWireServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
  vi.unstubAllEnvs();
});

function model(options: Partial<Parameters<typeof anthropicModel>[0]> = {}): Model {
  return anthropicModel({
    model: 'claude-test',
    baseURL: server.origin,
    apiKey: 'sk-ant-test',
    maxRetries: 0,
    ...options,
  });
}

/** A tool_use block at `index` whose input arrives in `fragments`, as the API streams it. */
function toolUseBlock(index: number, id: string, name: string, fragments: string[]): AnthropicEvent[] {
  return [
    e.toolUseStart(index, id, name),
    e.inputJson(index, ''),
    ...fragments.map((f) => e.inputJson(index, f)),
    e.blockStop(index),
  ];
}

function turn(blocks: AnthropicEvent[], stopReason: string, usage: [number, number] = [10, 5]): AnthropicEvent[] {
  return [e.messageStart(usage[0]), ...blocks, e.messageDelta(stopReason, usage[1]), e.messageStop()];
}

describe('anthropicModel streaming', () => {
  it('streams text deltas in order and ends with the full message and usage', async () => {
    server.enqueue(anthropicTextReply(['Hel', 'lo, ', 'world'], [25, 7]));
    const { events, done } = await run(model({ temperature: 0.3 }), request({ systemPrompt: 'Be brief.' }));

    expect(events.filter((event) => event.type === 'text_delta')).toEqual([
      { type: 'text_delta', delta: 'Hel' },
      { type: 'text_delta', delta: 'lo, ' },
      { type: 'text_delta', delta: 'world' },
    ]);
    expect(done).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello, world' }],
      stopReason: 'stop',
      usage: { inputTokens: 25, outputTokens: 7 },
      model: 'anthropic:claude-test',
    });
    expect(done.errorMessage).toBeUndefined();

    const body = server.requests[0]!.body;
    expect(body).toMatchObject({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(body).not.toHaveProperty('tools');
    // The API version the SDK sends (2026-10-21) answers 400 to any temperature.
    expect(body).not.toHaveProperty('temperature');
  });

  it('joins input_json_delta fragments per block, even when a fragment ends inside a JSON string', async () => {
    const fragments = ['{"pa', 'th": "src/ma', 'in.ts", "li', 'nes": [1, ', '2], "q": "say \\"hi', '\\""}'];
    server.enqueue({
      kind: 'stream',
      events: turn(
        [e.textStart(0), e.text(0, 'Reading.'), e.blockStop(0), ...toolUseBlock(1, 'toolu_1', 'read', fragments)],
        'tool_use',
      ),
    });
    const { events, done } = await run(model());

    expect(events.filter((event) => event.type === 'toolcall_start')).toEqual([
      { type: 'toolcall_start', index: 1, id: 'toolu_1', name: 'read' },
    ]);
    expect(events.flatMap((event) => (event.type === 'toolcall_delta' ? [event.delta] : []))).toEqual(fragments);
    expect(done.stopReason).toBe('toolUse');
    expect(done.content).toEqual([
      { type: 'text', text: 'Reading.' },
      {
        type: 'toolCall',
        id: 'toolu_1',
        name: 'read',
        arguments: { path: 'src/main.ts', lines: [1, 2], q: 'say "hi"' },
      },
    ]);
  });

  it('returns two parallel tool calls in block order', async () => {
    server.enqueue({
      kind: 'stream',
      events: turn(
        [
          ...toolUseBlock(0, 'toolu_a', 'read', ['{"path":', ' "a.ts"}']),
          ...toolUseBlock(1, 'toolu_b', 'grep', ['{"pattern": "TODO"}']),
        ],
        'tool_use',
      ),
    });
    const { events, done } = await run(model());
    expect(events.flatMap((event) => (event.type === 'toolcall_start' ? [event.index] : []))).toEqual([0, 1]);
    expect(done.content).toEqual([
      { type: 'toolCall', id: 'toolu_a', name: 'read', arguments: { path: 'a.ts' } },
      { type: 'toolCall', id: 'toolu_b', name: 'grep', arguments: { pattern: 'TODO' } },
    ]);
  });

  it('reads a tool_use block without input as {} and keeps unparseable input as the raw string', async () => {
    server.enqueue({
      kind: 'stream',
      events: turn(
        [
          e.toolUseStart(0, 'toolu_a', 'now'),
          e.blockStop(0),
          ...toolUseBlock(1, 'toolu_b', 'read', ['{"path": "a.ts"', ',']),
        ],
        'tool_use',
      ),
    });
    const { done } = await run(model());
    expect(done.content).toEqual([
      { type: 'toolCall', id: 'toolu_a', name: 'now', arguments: {} },
      { type: 'toolCall', id: 'toolu_b', name: 'read', arguments: '{"path": "a.ts",' },
    ]);
  });

  it.each([
    ['max_tokens', 'length'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
  ])('maps stop_reason %s to %s', async (apiReason, expected) => {
    server.enqueue({
      kind: 'stream',
      events: turn([e.textStart(0), e.text(0, 'Once upon'), e.blockStop(0)], apiReason),
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe(expected);
    expect(done.content).toEqual([{ type: 'text', text: 'Once upon' }]);
  });

  it('counts cached prompt tokens as input and takes the final counts from message_delta', async () => {
    const start = e.messageStart(3);
    Object.assign((start.message as { usage: Record<string, number> }).usage, {
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 20,
    });
    const delta: AnthropicEvent = {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 4, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 9 },
    };
    server.enqueue({
      kind: 'stream',
      events: [start, e.textStart(0), e.text(0, 'ok'), e.blockStop(0), delta, e.messageStop()],
    });
    const { done } = await run(model());
    expect(done.usage).toEqual({ inputTokens: 124, outputTokens: 9 });
  });

  it('passes maxTokens as max_tokens', async () => {
    server.enqueue(anthropicTextReply(['ok']));
    await run(model({ maxTokens: 123 }));
    expect(server.requests[0]!.body.max_tokens).toBe(123);
  });
});

describe('anthropicModel errors', () => {
  it('turns a 429 into an error message with the status and the server message', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      body: anthropicError('rate_limit_error', 'Number of request tokens has exceeded your rate limit'),
    });
    const { events, done } = await run(model());
    expect(events).toHaveLength(1);
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toContain('429');
    expect(done.errorMessage).toContain('Number of request tokens has exceeded your rate limit');
    expect(done.content).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('turns a 500 into an error message', async () => {
    server.enqueue({ kind: 'error', status: 500, body: anthropicError('api_error', 'Internal server error') });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/500: Internal server error$/);
  });

  it('retries a 500 when maxRetries allows it', async () => {
    server.enqueue(
      {
        kind: 'error',
        status: 500,
        body: anthropicError('api_error', 'Internal server error'),
        headers: { 'retry-after-ms': '10' },
      },
      anthropicTextReply(['second time lucky']),
    );
    const { done } = await run(model({ maxRetries: 1 }));
    expect(done.stopReason).toBe('stop');
    expect(done.content).toEqual([{ type: 'text', text: 'second time lucky' }]);
    expect(server.requests).toHaveLength(2);
  });

  it('says the API key was rejected on a 401', async () => {
    server.enqueue({ kind: 'error', status: 401, body: anthropicError('authentication_error', 'invalid x-api-key') });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/rejected the API key \(HTTP 401\): invalid x-api-key/);
  });

  it('names the server that could not be reached when the connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const { done } = await run(model({ baseURL: `http://127.0.0.1:${port}/v1` }));
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toBe(`The server at http://127.0.0.1:${port} could not be reached (connection refused)`);
  });

  it('keeps the partial content and reports an error when the connection breaks mid-stream', async () => {
    server.enqueue({
      kind: 'stream',
      events: turn(
        [e.textStart(0), e.text(0, 'Part'), e.text(0, 'ial'), e.text(0, ' never seen'), e.blockStop(0)],
        'end_turn',
      ),
      cutAfter: 4,
      cut: 'destroy',
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/cut off/);
    expect(done.content).toEqual([{ type: 'text', text: 'Partial' }]);
  });

  it('reports a stream that ends cleanly before message_stop', async () => {
    const events = turn(toolUseBlock(0, 'toolu_1', 'read', ['{"path":', '"a.ts"}']), 'tool_use');
    server.enqueue({ kind: 'stream', events, cutAfter: events.length - 1, cut: 'end' });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/stream ended before message_stop/);
    expect(done.content).toEqual([{ type: 'toolCall', id: 'toolu_1', name: 'read', arguments: { path: 'a.ts' } }]);
  });

  it('turns an error event in the stream into an error with its message, keeping the partial content', async () => {
    server.enqueue({
      kind: 'stream',
      events: [e.messageStart(10), e.textStart(0), e.text(0, 'Start'), e.error('overloaded_error', 'Overloaded')],
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/error in the stream \(overloaded_error\): Overloaded/);
    expect(done.content).toEqual([{ type: 'text', text: 'Start' }]);
  });
});

describe('anthropicModel abort', () => {
  it('stops mid-stream with the content streamed so far', async () => {
    server.enqueue({
      kind: 'stream',
      events: turn([e.textStart(0), e.text(0, 'Hello'), e.text(0, ' there'), e.blockStop(0)], 'end_turn'),
      hangAfter: 3,
    });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of model().stream(request({ signal: controller.signal }))) {
      events.push(event);
      if (event.type === 'text_delta') controller.abort();
    }
    const done = events.at(-1);
    expect(done?.type).toBe('done');
    if (done?.type !== 'done') return;
    expect(done.message.stopReason).toBe('aborted');
    expect(done.message.content).toEqual([{ type: 'text', text: 'Hello' }]);
  });

  it('does not send a request when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { done } = await run(model(), request({ signal: controller.signal }));
    expect(done.stopReason).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });
});

describe('anthropicModel request mapping', () => {
  const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };
  const pngBlock = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };

  it('merges consecutive tool results and the next user message into one user message, tool_result blocks first', async () => {
    const history: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'What is in this?' }, png], timestamp: 1 },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'toolCall', id: 'toolu_1', name: 'screenshot', arguments: { page: 2 } },
          { type: 'toolCall', id: 'toolu_2', name: 'read', arguments: '{"path": "a.ts"}' },
          { type: 'toolCall', id: 'toolu_3', name: 'read', arguments: '{"path": ' },
        ],
        stopReason: 'toolUse',
        timestamp: 2,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'screenshot',
        content: [{ type: 'text', text: 'Captured.' }, png],
        details: undefined,
        isError: false,
        timestamp: 3,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_2',
        toolName: 'read',
        content: [{ type: 'text', text: 'ENOENT: a.ts' }],
        details: undefined,
        isError: true,
        timestamp: 4,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_3',
        toolName: 'read',
        content: [],
        details: undefined,
        isError: true,
        timestamp: 5,
      },
      { role: 'user', content: 'Go on.', timestamp: 6 },
    ];
    server.enqueue(anthropicTextReply(['ok']));
    await run(model(), request({ messages: history }));
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in this?' }, pngBlock] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: { page: 2 } },
          { type: 'tool_use', id: 'toolu_2', name: 'read', input: { path: 'a.ts' } },
          { type: 'tool_use', id: 'toolu_3', name: 'read', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            is_error: false,
            content: [{ type: 'text', text: 'Captured.' }, pngBlock],
          },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            is_error: true,
            content: [{ type: 'text', text: 'ENOENT: a.ts' }],
          },
          { type: 'tool_result', tool_use_id: 'toolu_3', is_error: true },
          { type: 'text', text: 'Go on.' },
        ],
      },
    ]);
  });

  it('sends every MCP content type it can: a PDF as a document, audio and links as text saying what they were', async () => {
    server.enqueue(anthropicTextReply(['ok']));
    const messages: Message[] = [
      { role: 'user', content: 'go', timestamp: 1 },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'toolu_1', name: 'every_type', arguments: {} }],
        stopReason: 'toolUse',
        timestamp: 2,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'every_type',
        content: EVERY_TYPE,
        details: undefined,
        isError: false,
        timestamp: 3,
      },
    ];
    await run(model(), request({ messages }));
    expect((server.requests[0]!.body.messages as unknown[]).at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          is_error: false,
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            {
              type: 'text',
              text: '[audio audio/wav, 12 bytes] (not sent: the Anthropic Messages API takes no such part)',
            },
            { type: 'text', text: '[resource file:///notes.txt]\nthe notes' },
            {
              type: 'document',
              title: 'file:///report.pdf',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' },
            },
            { type: 'text', text: '[resource link file:///big.csv (big.csv), text/csv]' },
          ],
        },
      ],
    });
  });

  it('starts a new user message for tool results after the next assistant turn', async () => {
    const result = (id: string, timestamp: number): Message => ({
      role: 'toolResult',
      toolCallId: id,
      toolName: 'now',
      content: [{ type: 'text', text: '12:00' }],
      details: undefined,
      isError: false,
      timestamp,
    });
    const call = (id: string, timestamp: number): Message => ({
      role: 'assistant',
      content: [{ type: 'toolCall', id, name: 'now', arguments: {} }],
      stopReason: 'toolUse',
      timestamp,
    });
    server.enqueue(anthropicTextReply(['ok']));
    await run(
      model(),
      request({
        messages: [
          { role: 'user', content: 'hi', timestamp: 0 },
          call('t1', 1),
          result('t1', 2),
          call('t2', 3),
          result('t2', 4),
        ],
      }),
    );
    const roles = (server.requests[0]!.body.messages as Array<{ role: string }>).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });

  it('sends tools with their schema as input_schema', async () => {
    server.enqueue(anthropicTextReply(['ok']));
    const parameters = Type.Object({ path: Type.String({ description: 'File to read' }) });
    await run(model(), request({ tools: [{ name: 'read', description: 'Read a file', parameters }] }));
    expect(server.requests[0]!.body.tools).toEqual([
      {
        name: 'read',
        description: 'Read a file',
        input_schema: {
          type: 'object',
          properties: { path: { type: 'string', description: 'File to read' } },
          required: ['path'],
        },
      },
    ]);
  });
});

describe('anthropicModel configuration', () => {
  it.each([
    ['without /v1', ''],
    ['with /v1', '/v1'],
    ['with /v1/', '/v1/'],
    ['with a trailing slash', '/'],
  ])('accepts a baseURL %s', async (_label, suffix) => {
    server.enqueue(anthropicTextReply(['ok']));
    const { done } = await run(model({ baseURL: server.origin + suffix }));
    expect(done.stopReason).toBe('stop');
    expect(server.requests[0]!.url).toBe('/v1/messages');
  });

  it('throws a clear error at construction without a key or a baseURL', () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    expect(() => anthropicModel({ model: 'claude-test' })).toThrow(
      'ANTHROPIC_API_KEY is not set; pass apiKey or set the variable, or use a local server with baseURL',
    );
  });

  it('uses ANTHROPIC_API_KEY, and a placeholder key for a local server without one', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-from-env');
    server.enqueue(anthropicTextReply(['ok']), anthropicTextReply(['ok']));
    await run(anthropicModel({ model: 'claude-test', baseURL: server.origin }));
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    await run(anthropicModel({ model: 'claude-test', baseURL: server.origin }));
    // SDK 1.x sends the key as a bearer token.
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-ant-from-env',
      'Bearer not-needed',
    ]);
  });

  it('is named after the model', () => {
    expect(model().name).toBe('anthropic:claude-test');
  });
});
