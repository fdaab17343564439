import { Type } from '@sinclair/typebox';
import { EVERY_TYPE } from '../fixtures/content/every-type.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import type { Model, ModelStreamEvent } from '../../src/core/model.ts';
import { request, run } from '../support/model-run.ts';
import { openaiModel } from '../../src/models/openai.ts';
import {
  openaiChunks as c,
  openaiError,
  openaiTextReply,
  startOpenAIWireServer,
  type OpenAIWireServer,
} from '../support/openai-wire-server.ts';

let server: OpenAIWireServer;

beforeAll(async () => {
  server = await startOpenAIWireServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.requests.length = 0;
  vi.unstubAllEnvs();
});

function model(options: Partial<Parameters<typeof openaiModel>[0]> = {}): Model {
  return openaiModel({ model: 'gpt-test', baseURL: server.origin, apiKey: 'sk-test', maxRetries: 0, ...options });
}

function toolCallScript(calls: Array<{ index: number; id: string; name: string; fragments: string[] }>) {
  return [
    c.role(),
    ...calls.map((call) => c.toolCallStart(call.index, call.id, call.name)),
    ...calls.flatMap((call) => call.fragments.map((f) => c.toolCallArgs(call.index, f))),
  ];
}

describe('openaiModel streaming', () => {
  it('streams text deltas in order and ends with the full message and usage', async () => {
    server.enqueue(openaiTextReply(['Hel', 'lo, ', 'world'], [12, 3]));
    const { events, done } = await run(model(), request({ systemPrompt: 'Be brief.' }));

    expect(events.filter((e) => e.type === 'text_delta')).toEqual([
      { type: 'text_delta', delta: 'Hel' },
      { type: 'text_delta', delta: 'lo, ' },
      { type: 'text_delta', delta: 'world' },
    ]);
    expect(done).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello, world' }],
      stopReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 3 },
      model: 'openai:gpt-test',
    });
    expect(done.errorMessage).toBeUndefined();
    expect(typeof done.timestamp).toBe('number');

    const body = server.requests[0]!.body;
    expect(body).toMatchObject({ model: 'gpt-test', stream: true, stream_options: { include_usage: true } });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(body).not.toHaveProperty('tools');
  });

  it('joins tool-call arguments split across many chunks, even inside a JSON string', async () => {
    const fragments = ['{"pa', 'th": "src/ma', 'in.ts", "li', 'nes": [1, ', '2], "q": "say \\"hi', '\\""}'];
    server.enqueue({
      kind: 'stream',
      chunks: [
        c.role(),
        c.text('Reading.'),
        c.toolCallStart(0, 'call_1', 'read'),
        ...fragments.map((f) => c.toolCallArgs(0, f)),
        c.finish('tool_calls'),
        c.usage(20, 9),
      ],
    });
    const { events, done } = await run(model());

    expect(events.filter((e) => e.type === 'toolcall_start')).toEqual([
      { type: 'toolcall_start', index: 0, id: 'call_1', name: 'read' },
    ]);
    expect(
      events.filter((e) => e.type === 'toolcall_delta').map((e) => (e.type === 'toolcall_delta' ? e.delta : '')),
    ).toEqual(fragments);
    expect(done.stopReason).toBe('toolUse');
    expect(done.content).toEqual([
      { type: 'text', text: 'Reading.' },
      {
        type: 'toolCall',
        id: 'call_1',
        name: 'read',
        arguments: { path: 'src/main.ts', lines: [1, 2], q: 'say "hi"' },
      },
    ]);
  });

  it('keeps two parallel tool calls apart by index, in index order', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [
        c.role(),
        c.toolCallStart(0, 'call_a', 'read'),
        c.toolCallArgs(0, '{"path":'),
        c.toolCallStart(1, 'call_b', 'grep'),
        c.toolCallArgs(1, '{"pattern":'),
        c.toolCallArgs(0, '"a.ts"}'),
        c.toolCallArgs(1, '"TODO"}'),
        c.finish('tool_calls'),
        c.usage(5, 5),
      ],
    });
    const { events, done } = await run(model());

    expect(
      events.filter((e) => e.type === 'toolcall_start').map((e) => (e.type === 'toolcall_start' ? e.index : -1)),
    ).toEqual([0, 1]);
    expect(done.content).toEqual([
      { type: 'toolCall', id: 'call_a', name: 'read', arguments: { path: 'a.ts' } },
      { type: 'toolCall', id: 'call_b', name: 'grep', arguments: { pattern: 'TODO' } },
    ]);
  });

  it('reads no argument fragments as {} and keeps unparseable arguments as the raw string', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [
        ...toolCallScript([
          { index: 0, id: 'call_a', name: 'now', fragments: [] },
          { index: 1, id: 'call_b', name: 'read', fragments: ['{"path": "a.ts"', ','] },
        ]),
        c.finish('tool_calls'),
      ],
    });
    const { done } = await run(model());
    expect(done.content).toEqual([
      { type: 'toolCall', id: 'call_a', name: 'now', arguments: {} },
      { type: 'toolCall', id: 'call_b', name: 'read', arguments: '{"path": "a.ts",' },
    ]);
  });

  it('reports toolUse when a server ends a tool-call turn with finish_reason "stop"', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [...toolCallScript([{ index: 0, id: 'call_1', name: 'read', fragments: ['{}'] }]), c.finish('stop')],
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('toolUse');
  });

  it('maps finish_reason "length" to length, even with a tool call in flight', async () => {
    server.enqueue(
      { kind: 'stream', chunks: [c.role(), c.text('Once upon'), c.finish('length'), c.usage(3, 2)] },
      {
        kind: 'stream',
        chunks: [
          ...toolCallScript([{ index: 0, id: 'call_1', name: 'write', fragments: ['{"text": "ab'] }]),
          c.finish('length'),
        ],
      },
    );
    const text = await run(model());
    expect(text.done).toMatchObject({ stopReason: 'length', content: [{ type: 'text', text: 'Once upon' }] });
    const tool = await run(model());
    expect(tool.done.stopReason).toBe('length');
    expect(tool.done.content).toEqual([{ type: 'toolCall', id: 'call_1', name: 'write', arguments: '{"text": "ab' }]);
  });

  it('passes maxTokens as max_tokens and temperature to a compatible server', async () => {
    server.enqueue(openaiTextReply(['ok']));
    await run(model({ maxTokens: 321, temperature: 0.2 }));
    expect(server.requests[0]!.body).toMatchObject({ max_tokens: 321, temperature: 0.2 });
    expect(server.requests[0]!.body).not.toHaveProperty('max_completion_tokens');
  });

  it('uses max_completion_tokens with the official API, which rejects max_tokens for reasoning models', async () => {
    server.enqueue(openaiTextReply(['ok']));
    // A client aimed at api.openai.com whose fetch is routed to the local server.
    const client = new OpenAI({
      apiKey: 'sk-test',
      maxRetries: 0,
      fetch: (url, init) => fetch(String(url).replace('https://api.openai.com', server.origin), init),
    });
    const { done } = await run(openaiModel({ model: 'gpt-test', maxTokens: 99, client }));
    expect(done.stopReason).toBe('stop');
    expect(server.requests[0]!.body).toMatchObject({ max_completion_tokens: 99 });
    expect(server.requests[0]!.body).not.toHaveProperty('max_tokens');
  });
});

describe('openaiModel errors', () => {
  it('turns a 429 into an error message with the status and the server message', async () => {
    server.enqueue({
      kind: 'error',
      status: 429,
      body: openaiError('Rate limit reached for gpt-test', 'requests', 'rate_limit_exceeded'),
    });
    const { events, done } = await run(model());
    expect(events).toHaveLength(1);
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toContain('429');
    expect(done.errorMessage).toContain('Rate limit reached for gpt-test');
    expect(done.content).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('turns a 500 into an error message', async () => {
    server.enqueue({ kind: 'error', status: 500, body: openaiError('The server had an error', 'server_error', null) });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/500.*The server had an error/);
  });

  it('retries a 500 when maxRetries allows it', async () => {
    server.enqueue(
      {
        kind: 'error',
        status: 500,
        body: openaiError('The server had an error', 'server_error', null),
        headers: { 'retry-after-ms': '10' },
      },
      openaiTextReply(['second time lucky']),
    );
    const { done } = await run(model({ maxRetries: 1 }));
    expect(done.stopReason).toBe('stop');
    expect(done.content).toEqual([{ type: 'text', text: 'second time lucky' }]);
    expect(server.requests).toHaveLength(2);
  });

  it('says the API key was rejected on a 401', async () => {
    server.enqueue({
      kind: 'error',
      status: 401,
      body: openaiError('Incorrect API key provided: sk-test', 'invalid_request_error', 'invalid_api_key'),
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/rejected the API key/);
    expect(done.errorMessage).toContain('Incorrect API key provided');
  });

  it('names the server that could not be reached when the connection is refused', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const { done } = await run(model({ baseURL: `http://127.0.0.1:${port}` }));
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toBe(
      `The server at http://127.0.0.1:${port}/v1 could not be reached (connection refused)`,
    );
  });

  it('keeps the partial content and reports an error when the connection breaks mid-stream', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [c.role(), c.text('Part'), c.text('ial'), c.text(' never seen'), c.finish('stop')],
      cutAfter: 3,
      cut: 'destroy',
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/cut off/);
    expect(done.content).toEqual([{ type: 'text', text: 'Partial' }]);
  });

  it('reports a stream that ends cleanly but without a finish_reason as cut off', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [
        ...toolCallScript([{ index: 0, id: 'call_1', name: 'read', fragments: ['{"path":', '"a.ts"}'] }]),
        c.finish('tool_calls'),
      ],
      cutAfter: 4,
      cut: 'end',
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toBe('The stream was cut off: it ended without a finish_reason');
    expect(done.content).toEqual([{ type: 'toolCall', id: 'call_1', name: 'read', arguments: { path: 'a.ts' } }]);
  });

  it('reports a chunk that is not valid JSON', async () => {
    server.enqueue({ kind: 'raw', body: `data: ${JSON.stringify(c.text('ok'))}\n\ndata: {"choices": [\n\n` });
    const { done } = await run(model()); // the SDK also logs the bad line to stderr
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/not valid JSON/);
    expect(done.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('reports an error object sent inside the stream', async () => {
    server.enqueue({
      kind: 'raw',
      body: `data: ${JSON.stringify(openaiError('Model overloaded', 'server_error', null))}\n\n`,
    });
    const { done } = await run(model());
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/error in the stream: Model overloaded/);
  });
});

describe('openaiModel abort', () => {
  it('stops mid-stream with the content streamed so far', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [c.role(), c.text('Hello'), c.text(' there'), c.finish('stop')],
      hangAfter: 2,
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
    expect(done.content).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});

describe('openaiModel request mapping', () => {
  const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };
  const history: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'What is in this?' }, png], timestamp: 1 },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'toolCall', id: 'call_1', name: 'screenshot', arguments: { page: 2 } },
        { type: 'toolCall', id: 'call_2', name: 'read', arguments: '{"path": "a.ts"' },
      ],
      stopReason: 'toolUse',
      timestamp: 2,
    },
    {
      role: 'toolResult',
      toolCallId: 'call_1',
      toolName: 'screenshot',
      content: [{ type: 'text', text: 'Captured.' }, png],
      details: undefined,
      isError: false,
      timestamp: 3,
    },
    {
      role: 'toolResult',
      toolCallId: 'call_2',
      toolName: 'read',
      content: [{ type: 'text', text: 'ENOENT: a.ts' }],
      details: undefined,
      isError: true,
      timestamp: 4,
    },
    { role: 'user', content: 'Go on.', timestamp: 5 },
  ];

  it('sends tool calls as JSON strings, one tool message per call, and their images in one user message after', async () => {
    server.enqueue(openaiTextReply(['ok']));
    await run(model(), request({ messages: history }));
    expect(server.requests[0]!.body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'screenshot', arguments: '{"page":2}' } },
          { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{"path": "a.ts"' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Captured.' },
      { role: 'tool', tool_call_id: 'call_2', content: 'ENOENT: a.ts' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Image output of tool call call_1 (screenshot):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('sends every MCP content type it can: audio as input_audio, a PDF as a file, the rest as text saying what it was and that it was not sent', async () => {
    server.enqueue(openaiTextReply(['ok']));
    const messages: Message[] = [
      { role: 'user', content: 'go', timestamp: 1 },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'every_type', arguments: {} }],
        stopReason: 'toolUse',
        timestamp: 2,
      },
      {
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'every_type',
        content: [...EVERY_TYPE, { type: 'audio', data: 'AAAA', mimeType: 'audio/ogg' }],
        details: undefined,
        isError: false,
        timestamp: 3,
      },
    ];
    await run(model(), request({ messages }));
    expect((server.requests[0]!.body.messages as unknown[]).slice(2)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'c1',
        content:
          'hello\n[resource file:///notes.txt]\nthe notes\n[resource link file:///big.csv (big.csv), text/csv]\n' +
          '[audio audio/ogg, 3 bytes] (not sent: the OpenAI Chat Completions API takes no such part)',
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Output of tool call c1 (every_type):' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'input_audio', input_audio: { data: 'UklGRiQAAABXQVZF', format: 'wav' } },
          {
            type: 'file',
            file: { filename: 'file:///report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQK' },
          },
        ],
      },
    ]);
  });

  it('sends tools as functions with their JSON schema', async () => {
    server.enqueue(openaiTextReply(['ok']));
    const parameters = Type.Object({ path: Type.String({ description: 'File to read' }) });
    await run(model(), request({ tools: [{ name: 'read', description: 'Read a file', parameters }] }));
    expect(server.requests[0]!.body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'read',
          description: 'Read a file',
          parameters: {
            type: 'object',
            properties: { path: { type: 'string', description: 'File to read' } },
            required: ['path'],
          },
        },
      },
    ]);
  });

  it('sends a null content for an assistant message with only tool calls', async () => {
    server.enqueue(openaiTextReply(['ok']));
    const messages: Message[] = [
      { role: 'user', content: 'hi', timestamp: 1 },
      {
        role: 'assistant',
        content: [{ type: 'toolCall', id: 'c1', name: 'now', arguments: {} }],
        stopReason: 'toolUse',
        timestamp: 2,
      },
      {
        role: 'toolResult',
        toolCallId: 'c1',
        toolName: 'now',
        content: [{ type: 'text', text: '12:00' }],
        details: undefined,
        isError: false,
        timestamp: 3,
      },
    ];
    await run(model(), request({ messages }));
    expect(server.requests[0]!.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'now', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '12:00' },
    ]);
  });
});

describe('openaiModel configuration', () => {
  it.each([
    ['without /v1', ''],
    ['with /v1', '/v1'],
    ['with /v1/', '/v1/'],
    ['with a trailing slash', '/'],
  ])('accepts a baseURL %s', async (_label, suffix) => {
    server.enqueue(openaiTextReply(['ok']));
    const { done } = await run(model({ baseURL: server.origin + suffix }));
    expect(done.stopReason).toBe('stop');
    expect(server.requests[0]!.url).toBe('/v1/chat/completions');
  });

  it('throws a clear error at construction without a key or a baseURL', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    expect(() => openaiModel({ model: 'gpt-test' })).toThrow(
      'OPENAI_API_KEY is not set; pass apiKey or set the variable, or use a local server with baseURL',
    );
  });

  it('uses OPENAI_API_KEY, and a placeholder key for a local server without one', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-env');
    server.enqueue(openaiTextReply(['ok']), openaiTextReply(['ok']));
    await run(openaiModel({ model: 'gpt-test', baseURL: server.origin }));
    vi.stubEnv('OPENAI_API_KEY', '');
    await run(openaiModel({ model: 'gpt-test', baseURL: server.origin }));
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-from-env', 'Bearer not-needed']);
  });

  it('is named after the model', () => {
    expect(model().name).toBe('openai:gpt-test');
  });
});
