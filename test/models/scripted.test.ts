import { describe, expect, test } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import type { ModelRequest, ModelStreamEvent } from '../../src/core/model.ts';
import { scriptedModel, type ScriptStep } from '../../src/models/scripted.ts';

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'hi', timestamp: 1 }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function play(model: ReturnType<typeof scriptedModel>, req: ModelRequest = request()) {
  const events: ModelStreamEvent[] = [];
  for await (const event of model.stream(req)) events.push(event);
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error(`last event is ${last?.type}`);
  expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
  return { events, done: last.message, deltas: events.filter((e) => e.type !== 'done') };
}

describe('scriptedModel', () => {
  test('streams text in several small deltas and ends with the whole message', async () => {
    const model = scriptedModel([{ text: 'The quick brown fox jumps over the lazy dog.' }]);
    const { deltas, done } = await play(model);

    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
    expect(deltas.map((d) => (d.type === 'text_delta' ? d.delta : '')).join('')).toBe(
      'The quick brown fox jumps over the lazy dog.',
    );
    expect(done).toMatchObject({
      role: 'assistant',
      content: [{ type: 'text', text: 'The quick brown fox jumps over the lazy dog.' }],
      stopReason: 'stop',
      model: 'scripted',
    });
  });

  test('streams tool calls as a start and argument fragments; ids are generated when missing', async () => {
    const args = { expression: '2 * (3 + 4) ^ 2', precision: 3 };
    const model = scriptedModel([
      {
        text: 'Let me compute.',
        toolCalls: [
          { name: 'calculator', arguments: args },
          { name: 'hash', arguments: { text: 'x', rounds: 5 }, id: 'mine' },
        ],
      },
    ]);
    const { deltas, done } = await play(model);

    const starts = deltas.filter((d) => d.type === 'toolcall_start');
    expect(starts).toEqual([
      { type: 'toolcall_start', index: 0, id: 'call_1_1', name: 'calculator' },
      { type: 'toolcall_start', index: 1, id: 'mine', name: 'hash' },
    ]);
    const fragments = deltas.filter((d) => d.type === 'toolcall_delta' && d.index === 0);
    expect(fragments.length).toBeGreaterThan(3);
    expect(JSON.parse(fragments.map((d) => (d.type === 'toolcall_delta' ? d.delta : '')).join(''))).toEqual(args);
    // Text comes before the calls, as models stream it.
    expect(deltas.findIndex((d) => d.type === 'toolcall_start')).toBeGreaterThan(
      deltas.findLastIndex((d) => d.type === 'text_delta'),
    );
    expect(done.stopReason).toBe('toolUse');
    expect(done.content).toEqual([
      { type: 'text', text: 'Let me compute.' },
      { type: 'toolCall', id: 'call_1_1', name: 'calculator', arguments: args },
      { type: 'toolCall', id: 'mine', name: 'hash', arguments: { text: 'x', rounds: 5 } },
    ]);
  });

  test('a turn given as a function sees the request, so the script can react to tool results', async () => {
    const seen: Message[][] = [];
    const step: ScriptStep = (req, turn) => {
      seen.push(req.messages);
      const last = req.messages.at(-1);
      return {
        text: `turn ${turn}: ${last?.role === 'toolResult' ? `the tool said ${JSON.stringify(last.content[0])}` : 'no result'}`,
      };
    };
    const model = scriptedModel([step]);
    const { done } = await play(
      model,
      request({
        messages: [
          { role: 'user', content: 'go', timestamp: 1 },
          {
            role: 'toolResult',
            toolCallId: 'a',
            toolName: 't',
            content: [{ type: 'text', text: '42' }],
            details: undefined,
            isError: false,
            timestamp: 2,
          },
        ],
      }),
    );
    expect(seen).toHaveLength(1);
    expect(done.content).toEqual([{ type: 'text', text: 'turn 1: the tool said {"type":"text","text":"42"}' }]);
  });

  test('running out of script is an error turn that says so', async () => {
    const model = scriptedModel([{ text: 'only one' }]);
    await play(model);
    expect(model.remaining).toBe(0);
    const { deltas, done } = await play(model);
    expect(deltas).toEqual([]);
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/script has 1 turn\(s\).*model call 2 has no answer/);
  });

  test('a script function that throws becomes an error turn', async () => {
    const model = scriptedModel([
      () => {
        throw new Error('script bug');
      },
    ]);
    const { done } = await play(model);
    expect(done).toMatchObject({ stopReason: 'error', errorMessage: 'scriptedModel: turn 1: script bug' });
  });

  test('a turn can force stopReason length; cut-off argument JSON stays a string', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'calculator', arguments: '{"expression": "2 +' }], stopReason: 'length' },
    ]);
    const { done } = await play(model);
    expect(done.stopReason).toBe('length');
    expect(done.content).toEqual([
      { type: 'toolCall', id: 'call_1_1', name: 'calculator', arguments: '{"expression": "2 +' },
    ]);
  });

  test('a turn can force an error with a message', async () => {
    const model = scriptedModel([{ text: 'partial', stopReason: 'error', errorMessage: 'HTTP 500' }]);
    const { done } = await play(model);
    expect(done).toMatchObject({
      stopReason: 'error',
      errorMessage: 'HTTP 500',
      content: [{ type: 'text', text: 'partial' }],
    });
  });

  test('an abort between deltas ends the turn with what was streamed so far, stopReason aborted', async () => {
    const controller = new AbortController();
    const model = scriptedModel([
      { text: 'one two three four five six seven eight nine ten', toolCalls: [{ name: 'x', arguments: { a: 1 } }] },
    ]);
    const events: ModelStreamEvent[] = [];
    for await (const event of model.stream(request({ signal: controller.signal }))) {
      events.push(event);
      // Abort from outside the stream, on a later turn of the event loop: the model must still notice.
      if (events.length === 3) setImmediate(() => controller.abort());
    }
    const done = events.at(-1) as Extract<ModelStreamEvent, { type: 'done' }>;
    const streamed = events
      .filter((e) => e.type === 'text_delta')
      .map((e) => (e.type === 'text_delta' ? e.delta : ''))
      .join('');
    expect(done.type).toBe('done');
    expect(done.message.stopReason).toBe('aborted');
    expect(streamed.length).toBeLessThan('one two three four five six seven eight nine ten'.length);
    expect(done.message.content).toEqual([{ type: 'text', text: streamed }]);
  });

  test('an already aborted signal ends the turn at once', async () => {
    const controller = new AbortController();
    controller.abort();
    const model = scriptedModel([{ text: 'never said' }]);
    const { deltas, done } = await play(model, request({ signal: controller.signal }));
    expect(deltas).toEqual([]);
    expect(done.stopReason).toBe('aborted');
    expect(done.content).toEqual([]);
  });

  test('records each request (with a copy of its messages) and counts the turns left', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }], { name: 'test-model' });
    const messages: Message[] = [{ role: 'user', content: 'first', timestamp: 1 }];
    const { done } = await play(model, request({ messages }));
    messages.push({ role: 'user', content: 'added later', timestamp: 2 });
    expect(done.model).toBe('test-model');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.messages).toHaveLength(1);
    expect(model.remaining).toBe(1);
  });

  test('rejects a turn that is not { text?, toolCalls? }', async () => {
    const model = scriptedModel([() => ({ toolCalls: [{ arguments: {} }] }) as never]);
    const { done } = await play(model);
    expect(done.stopReason).toBe('error');
    expect(done.errorMessage).toMatch(/toolCalls\[0\] needs a string "name"/);
  });
});
