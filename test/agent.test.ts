import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import {
  Agent,
  defineTool,
  scriptedModel,
  type AgentEvent,
  type Message,
  type Model,
  type ToolResultMessage,
} from '../src/index.ts';
import { textOf, type AssistantMessage } from '../src/core/messages.ts';
import { exampleTool, fixture, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** An inline tool that reports one update, then echoes its text (or asks to terminate). */
function echoTool(log: string[] = []) {
  return defineTool({
    name: 'echo',
    description: 'Echo a text',
    parameters: Type.Object({ text: Type.String(), terminate: Type.Optional(Type.Boolean()) }),
    execute({ text, terminate }, ctx) {
      log.push(`run:${text}`);
      ctx.onUpdate({ content: [{ type: 'text', text: `echoing ${text}` }] });
      return { content: [{ type: 'text', text: `echo: ${text}` }], ...(terminate ? { terminate } : {}) };
    },
  });
}

/** Records every event; awaits a turn of the event loop in each, so order holds only if listeners are awaited in order. */
function record(agent: Agent): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.subscribe(async (event) => {
    events.push(event);
    await new Promise((resolve) => setImmediate(resolve));
  });
  return events;
}

/** `type[:detail]` per event, consecutive message_updates collapsed to one entry. */
function outline(events: AgentEvent[]): string[] {
  const lines: string[] = [];
  for (const event of events) {
    let line: string = event.type;
    if (event.type === 'message_start' || event.type === 'message_end') line += `:${roleOf(event.message)}`;
    if (event.type === 'tool_start' || event.type === 'tool_update' || event.type === 'tool_end')
      line += `:${event.toolCallId}`;
    if (event.type === 'turn_start' || event.type === 'turn_end') line += `:${event.turn}`;
    if (event.type === 'agent_end') line += `:${event.reason}`;
    if (line === 'message_update' && lines.at(-1) === 'message_update…') continue;
    lines.push(line === 'message_update' ? 'message_update…' : line);
  }
  return lines;
}

function roleOf(message: Message): string {
  return message.role === 'toolResult' ? `toolResult(${message.toolCallId})` : message.role;
}

/** Every tool call has exactly one result, and the results follow their assistant message before anything else. */
function expectValidTranscript(messages: readonly Message[]): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    const ids = message.content.flatMap((part) => (part.type === 'toolCall' ? [part.id] : []));
    const following = messages.slice(i + 1, i + 1 + ids.length);
    expect(
      following.map((m) => (m.role === 'toolResult' ? m.toolCallId : `(${m.role})`)),
      `results of message ${i}`,
    ).toEqual(ids);
  }
  const resultIds = messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []));
  expect(new Set(resultIds).size).toBe(resultIds.length);
}

const lastEvent = (events: AgentEvent[]) => events.at(-1) as Extract<AgentEvent, { type: 'agent_end' }>;
const results = (messages: Message[]) => messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
const assistants = (messages: Message[]) => messages.filter((m): m is AssistantMessage => m.role === 'assistant');

describe('Agent: events', () => {
  test('a two-turn run emits every event in order, tool events included, through one awaited chain', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      {
        text: 'Echoing twice.',
        toolCalls: [
          { name: 'echo', arguments: { text: 'a' }, id: 'c1' },
          { name: 'echo', arguments: { text: 'b' }, id: 'c2' },
        ],
      },
      { text: 'Both echoed.' },
    ]);
    const agent = new Agent({ model, executor, systemPrompt: 'Be brief.' });
    const events = record(agent);
    const added = await agent.prompt('echo a and b');

    expect(outline(events)).toEqual([
      'agent_start',
      'turn_start:1',
      'message_start:user',
      'message_end:user',
      'message_start:assistant',
      'message_update…',
      'message_end:assistant',
      'tool_start:c1',
      'tool_start:c2',
      'tool_update:c1',
      'tool_update:c2',
      'tool_end:c1',
      'tool_end:c2',
      'message_start:toolResult(c1)',
      'message_end:toolResult(c1)',
      'message_start:toolResult(c2)',
      'message_end:toolResult(c2)',
      'turn_end:1',
      'turn_start:2',
      'message_start:assistant',
      'message_update…',
      'message_end:assistant',
      'turn_end:2',
      'agent_end:stop',
    ]);

    // message_update carries the delta and the message so far.
    const updates = events.filter(
      (e): e is Extract<AgentEvent, { type: 'message_update' }> => e.type === 'message_update',
    );
    const firstTurnText = updates.filter((u) => u.delta.type === 'text_delta').slice(0, 3);
    expect(firstTurnText.map((u) => u.message.content[0])).toEqual([
      { type: 'text', text: 'Echoing ' },
      { type: 'text', text: 'Echoing twice.' },
      { type: 'text', text: 'Both ' },
    ]);
    expect(updates.some((u) => u.delta.type === 'toolcall_start' && u.delta.id === 'c1')).toBe(true);

    const turnEnd = events.find((e): e is Extract<AgentEvent, { type: 'turn_end' }> => e.type === 'turn_end')!;
    expect(turnEnd.message.stopReason).toBe('toolUse');
    expect(turnEnd.toolResults.map((r) => [r.toolCallId, textOf(r)])).toEqual([
      ['c1', 'echo: a'],
      ['c2', 'echo: b'],
    ]);

    const end = lastEvent(events);
    expect(end).toMatchObject({ type: 'agent_end', reason: 'stop', turns: 2 });
    expect(end.messages).toEqual(added);
    expect(added.map(roleOf)).toEqual(['user', 'assistant', 'toolResult(c1)', 'toolResult(c2)', 'assistant']);
    expect(agent.messages).toEqual(added);
    expect(textOf(assistants(added)[1]!)).toBe('Both echoed.');

    // The model saw the system prompt, the tools, and the results on its second turn.
    expect(model.requests[0]).toMatchObject({ systemPrompt: 'Be brief.', tools: executor.definitions });
    expect(model.requests[1]!.messages.map(roleOf)).toEqual(['user', 'assistant', 'toolResult(c1)', 'toolResult(c2)']);
  });

  test('a listener that throws does not break the run; the others still see every event', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'done' }]);
    const reported: unknown[] = [];
    const agent = new Agent({ model, executor, onListenerError: (error) => reported.push(error) });
    agent.subscribe(() => {
      throw new Error('listener bug');
    });
    agent.subscribe(async () => {
      await Promise.reject(new Error('async listener bug'));
    });
    const events = record(agent);
    const added = await agent.prompt('go');

    expect(lastEvent(events)).toMatchObject({ type: 'agent_end', reason: 'stop' });
    expect(events.filter((e) => e.type === 'tool_end')).toHaveLength(1);
    expect(reported.length).toBe(events.length * 2);
    expect(textOf(assistants(added).at(-1)!)).toBe('done');
  });

  test('unsubscribe stops delivery', async () => {
    const executor = await createExecutor({ tools: [] });
    const agent = new Agent({ model: scriptedModel([{ text: 'a' }, { text: 'b' }]), executor });
    const seen: string[] = [];
    const unsubscribe = agent.subscribe((event) => void seen.push(event.type));
    await agent.prompt('one');
    const count = seen.length;
    unsubscribe();
    await agent.prompt('two');
    expect(seen.length).toBe(count);
  });
});

describe('Agent: the loop', () => {
  test('a script reacts to a tool result: the worker calculator answers, the model uses the number', async () => {
    const executor = await createExecutor({ tools: [exampleTool('calculator.ts')] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '6 * 7' } }] },
      (request) => {
        const result = results(request.messages).at(-1)!;
        const value = /= (\S+)/.exec(textOf(result))?.[1];
        return { text: `The answer is ${value}.` };
      },
    ]);
    const agent = new Agent({ model, executor });
    const added = await agent.prompt('What is 6 * 7?');
    expect(textOf(assistants(added).at(-1)!)).toBe('The answer is 42.');
  });

  test('a validation error goes back to the model, which corrects the call', async () => {
    const executor = await createExecutor({ tools: [exampleTool('calculator.ts')] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1 / 3', precision: 'two' } }] },
      (request) => {
        const last = results(request.messages).at(-1)!;
        return last.isError && /precision/.test(textOf(last))
          ? { toolCalls: [{ name: 'calculator', arguments: { expression: '1 / 3', precision: 2 } }] }
          : { text: 'no correction needed' };
      },
      (request) => ({ text: textOf(results(request.messages).at(-1)!) }),
    ]);
    const added = await new Agent({ model, executor }).prompt('one third?');
    expect(results(added).map((r) => r.isError)).toEqual([true, false]);
    expect(textOf(assistants(added).at(-1)!)).toBe('1 / 3 = 0.33');
  });

  test('a batch in which every result asks to terminate ends the run without another model call', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'bye', terminate: true } }] },
      { text: 'never asked for' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('finish');
    expect(lastEvent(events)).toMatchObject({ reason: 'terminate', turns: 1 });
    expect(model.requests).toHaveLength(1);
    expect(model.remaining).toBe(1);
    expect(added.at(-1)).toMatchObject({ role: 'toolResult', isError: false });
  });

  test('stop from beforeToolCall ends the run after the batch, with the reason in agent_end', async () => {
    const log: string[] = [];
    const executor = await createExecutor({
      tools: [echoTool(log)],
      beforeToolCall: ({ args }) =>
        args.text === 'forbidden' ? { stop: true, reason: 'budget exhausted' } : undefined,
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'echo', arguments: { text: 'forbidden' } },
          { name: 'echo', arguments: { text: 'later' } },
        ],
      },
      { text: 'never asked for' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('go');

    expect(lastEvent(events)).toMatchObject({ reason: 'hookStop', hookStopReason: 'budget exhausted' });
    expect(model.requests).toHaveLength(1);
    expect(log).toEqual([]);
    expect(results(added).map((r) => [r.isError, textOf(r)])).toEqual([
      [true, 'Not run: the run was stopped (budget exhausted).'],
      [true, 'Not run: the run was stopped (budget exhausted).'],
    ]);
    expectValidTranscript(agent.messages);
  });

  test('stop from afterToolCall ends the run too', async () => {
    const executor = await createExecutor({ tools: [echoTool()], afterToolCall: () => ({ stop: true }) });
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: 'never' }]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    await agent.prompt('go');
    expect(lastEvent(events).reason).toBe('hookStop');
    expect(model.requests).toHaveLength(1);
  });

  test('maxTurns ends a model that keeps calling tools; every call keeps its result', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const again = { toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] };
    const model = scriptedModel([again, again, again, again]);
    const agent = new Agent({ model, executor, maxTurns: 2 });
    const events = record(agent);
    const added = await agent.prompt('loop');
    expect(lastEvent(events)).toMatchObject({ reason: 'maxTurns', turns: 2 });
    expect(model.requests).toHaveLength(2);
    expect(results(added)).toHaveLength(2);
    expectValidTranscript(added);
  });

  test('a turn cut off by the length limit: its calls do not run, the model is asked to call again', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [echoTool(log)] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: '{"text": "hel' }], stopReason: 'length' },
      (request) => {
        const last = results(request.messages).at(-1)!;
        return /call the tool again with complete arguments/i.test(textOf(last))
          ? { toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] }
          : { text: 'gave up' };
      },
      { text: 'done' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('say hello');

    expect(assistants(added).map((m) => m.stopReason)).toEqual(['length', 'toolUse', 'stop']);
    expect(log).toEqual(['run:hello']);
    // The cut-off call did not run, but it starts and ends like any other call (issue 13).
    const cutId = results(added)[0]!.toolCallId;
    expect(outline(events).filter((line) => line.includes(cutId))).toEqual([
      `tool_start:${cutId}`,
      `tool_end:${cutId}`,
      `message_start:toolResult(${cutId})`,
      `message_end:toolResult(${cutId})`,
    ]);
    expect(events.filter((e) => e.type === 'tool_start')).toHaveLength(2);
    const [cut, ok] = results(added);
    expect(cut).toMatchObject({ isError: true, toolName: 'echo' });
    expect(textOf(cut!)).toMatch(/token limit.*"echo".*Call the tool again with complete arguments/);
    expect(textOf(ok!)).toBe('echo: hello');
    expect(lastEvent(events).reason).toBe('stop');
  });

  test('a model turn ending in error ends the run; the error is in the transcript and in agent_end', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      {
        text: 'Let me',
        toolCalls: [{ name: 'echo', arguments: { text: 'x' } }],
        stopReason: 'error',
        errorMessage: 'HTTP 500 from the server',
      },
      { text: 'never' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('go');
    expect(lastEvent(events)).toMatchObject({ reason: 'error', error: 'HTTP 500 from the server' });
    expect(assistants(added)[0]).toMatchObject({ stopReason: 'error', errorMessage: 'HTTP 500 from the server' });
    expect(results(added)).toHaveLength(1);
    expect(textOf(results(added)[0]!)).toMatch(/Not run: the model turn failed \(HTTP 500/);
    expect(model.requests).toHaveLength(1);
  });

  test('a model that throws is an error turn, not a rejected prompt', async () => {
    const executor = await createExecutor({ tools: [] });
    const model: Model = {
      name: 'broken',
      // biome-ignore lint/correctness/useYield: a model stream that fails before its first event.
      async *stream() {
        throw new Error('socket hang up');
      },
    };
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('hi');
    expect(lastEvent(events)).toMatchObject({ reason: 'error', error: 'The model failed: socket hang up' });
    expect(added.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error' });
  });

  test('an empty errored assistant message is not sent back to the model', async () => {
    const executor = await createExecutor({ tools: [] });
    const model = scriptedModel([{ stopReason: 'error', errorMessage: 'HTTP 429' }, { text: 'hello again' }]);
    const agent = new Agent({ model, executor });
    await agent.prompt('first');
    await agent.prompt('second');
    expect(agent.messages.map(roleOf)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(model.requests[1]!.messages.map(roleOf)).toEqual(['user', 'user']);
  });

  test('prompt() while a run is active rejects with a clear error; the active run is unharmed', async () => {
    const executor = await createExecutor({ tools: [] });
    const agent = new Agent({ model: scriptedModel([{ text: 'one two three' }]), executor });
    const first = agent.prompt('first');
    expect(agent.isRunning).toBe(true);
    await expect(agent.prompt('second')).rejects.toThrow(/already in progress.*steer/);
    const added = await first;
    expect(added.map(roleOf)).toEqual(['user', 'assistant']);
    expect(agent.isRunning).toBe(false);
  });

  test('rejects bad options', async () => {
    const executor = await createExecutor({ tools: [] });
    expect(() => new Agent({ model: {} as Model, executor })).toThrow(/option model/);
    expect(() => new Agent({ model: scriptedModel([]), executor: {} as never })).toThrow(/option executor/);
    expect(() => new Agent({ model: scriptedModel([]), executor, maxTurns: 0 })).toThrow(/option maxTurns/);
  });
});

describe('Agent: abort', () => {
  test('abort in the middle of the model stream: aborted assistant message with the partial text, prompt resolves', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([{ text: 'one two three four five six seven eight nine ten' }, { text: 'never' }]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    agent.subscribe((event) => {
      if (event.type === 'message_update' && textOf(event.message).startsWith('one two three')) agent.abort();
    });
    const added = await agent.prompt('count');

    const message = assistants(added)[0]!;
    expect(message.stopReason).toBe('aborted');
    expect(textOf(message)).toBe('one two three ');
    expect(lastEvent(events)).toMatchObject({ reason: 'aborted', turns: 1 });
    expect(model.requests).toHaveLength(1);
  });

  test('abort while the model writes tool calls: the partial calls get error results, the transcript stays valid', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [echoTool(log)] });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'echo', arguments: { text: 'first' } },
          { name: 'echo', arguments: { text: 'a long second argument' } },
        ],
      },
      { text: 'answered the next prompt' },
    ]);
    const agent = new Agent({ model, executor });
    agent.subscribe((event) => {
      if (event.type === 'message_update' && event.delta.type === 'toolcall_start' && event.delta.index === 1)
        agent.abort();
    });
    const added = await agent.prompt('go');

    expect(log).toEqual([]);
    const message = assistants(added)[0]!;
    expect(message.stopReason).toBe('aborted');
    expect(message.content.filter((p) => p.type === 'toolCall')).toHaveLength(2);
    expect(results(added).map((r) => [r.isError, textOf(r)])).toEqual([
      [true, 'Not run: the run was aborted.'],
      [true, 'Not run: the run was aborted.'],
    ]);
    expectValidTranscript(agent.messages);

    // The transcript can go to a model again.
    await agent.prompt('try again');
    expectValidTranscript(model.requests[1]!.messages);
    expect(textOf(agent.messages.at(-1) as AssistantMessage)).toBe('answered the next prompt');
  });

  test('abort reaches a model that ignores its signal', async () => {
    const executor = await createExecutor({ tools: [] });
    const model: Model = {
      name: 'stubborn',
      async *stream() {
        yield { type: 'text_delta', delta: 'thinking' };
        await new Promise(() => {}); // never resolves, never looks at the signal
      },
    };
    const agent = new Agent({ model, executor });
    agent.subscribe((event) => {
      if (event.type === 'message_update') setImmediate(() => agent.abort());
    });
    const added = await agent.prompt('hi');
    expect(added.at(-1)).toMatchObject({
      role: 'assistant',
      stopReason: 'aborted',
      content: [{ type: 'text', text: 'thinking' }],
    });
  });

  test('abort in the middle of a worker tool: the tool is stopped, its result is an error, no further model call', async () => {
    const executor = await createExecutor({
      tools: [exampleTool('hash.ts'), echoTool()],
      limits: { abortGraceMs: 200 },
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'echo', arguments: { text: 'quick' } },
          { name: 'hash', arguments: { text: 'x', rounds: 50_000_000, progressSteps: 1000 } },
        ],
      },
      { text: 'never' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    agent.subscribe((event) => {
      if (event.type === 'tool_update' && event.toolName === 'hash') agent.abort();
    });
    const added = await agent.prompt('hash it');

    const [quick, hash] = results(added);
    expect(quick).toMatchObject({ isError: false });
    expect(hash).toMatchObject({ isError: true, toolName: 'hash' });
    expect(textOf(hash!)).toMatch(/aborted/i);
    expect(lastEvent(events)).toMatchObject({ reason: 'aborted', turns: 1 });
    expect(model.requests).toHaveLength(1);
    expectValidTranscript(added);
  });

  test('abort in the middle of a tool that honours its signal (module tool)', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'probe', arguments: { action: 'honour-signal', ms: 20_000 } }] },
      { text: 'never' },
    ]);
    const agent = new Agent({ model, executor });
    agent.subscribe((event) => {
      if (event.type === 'tool_start') setTimeout(() => agent.abort(), 50);
    });
    const added = await agent.prompt('wait');
    expect(results(added)[0]).toMatchObject({ isError: true });
    expect(textOf(results(added)[0]!)).toMatch(/aborted/i);
  });

  test('abort() while idle does nothing, and the next prompt runs normally', async () => {
    const executor = await createExecutor({ tools: [] });
    const agent = new Agent({ model: scriptedModel([{ text: 'fine' }]), executor });
    agent.abort();
    const added = await agent.prompt('hi');
    expect(added.at(-1)).toMatchObject({ stopReason: 'stop' });
  });
});

describe('Agent: steer', () => {
  test('a steer() during tools enters the transcript after the batch, before the next model turn', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' }, id: 'c1' }] },
      { text: 'ok, in French' },
    ]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    agent.subscribe((event) => {
      if (event.type === 'tool_start') agent.steer('answer in French');
    });
    const added = await agent.prompt('go');

    expect(added.map(roleOf)).toEqual(['user', 'assistant', 'toolResult(c1)', 'user', 'assistant']);
    expect(added[3]).toMatchObject({ role: 'user', content: 'answer in French' });
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'answer in French' });
    const outlineOf = outline(events);
    expect(outlineOf.slice(outlineOf.indexOf('turn_start:2'), outlineOf.indexOf('turn_start:2') + 3)).toEqual([
      'turn_start:2',
      'message_start:user',
      'message_end:user',
    ]);
  });

  test('a steer() while the model writes its final answer is answered in one more turn', async () => {
    const executor = await createExecutor({ tools: [] });
    const model = scriptedModel([
      { text: 'Here is my final answer.' },
      (request) => ({ text: `You said: ${String(request.messages.at(-1)!.content)}` }),
    ]);
    const agent = new Agent({ model, executor });
    let steered = false;
    agent.subscribe((event) => {
      if (event.type === 'message_update' && !steered) {
        steered = true;
        agent.steer('one more thing');
      }
    });
    const events = record(agent);
    const added = await agent.prompt('question');

    expect(added.map(roleOf)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textOf(assistants(added)[1]!)).toBe('You said: one more thing');
    expect(lastEvent(events)).toMatchObject({ reason: 'stop', turns: 2 });
  });

  test('a steer() the run could not answer waits for the next prompt, ahead of its text', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x', terminate: true } }] },
      { text: 'answered' },
    ]);
    const agent = new Agent({ model, executor });
    agent.subscribe((event) => {
      if (event.type === 'tool_start') agent.steer('remember this');
    });
    await agent.prompt('first');
    expect(agent.messages.some((m) => m.role === 'user' && m.content === 'remember this')).toBe(false);
    const added = await agent.prompt('second');
    expect(added.slice(0, 2)).toMatchObject([
      { role: 'user', content: 'remember this' },
      { role: 'user', content: 'second' },
    ]);
  });
});

describe('Agent: steering and follow-up modes (pi-agent-core parity)', () => {
  /** A model that answers each request with the user messages it has not answered yet. */
  function sayWhatIsNew() {
    return (request: { messages: Message[] }) => {
      const sinceLastAnswer = request.messages.slice(request.messages.findLastIndex((m) => m.role === 'assistant') + 1);
      return {
        text: `got: ${sinceLastAnswer
          .filter((m) => m.role === 'user')
          .map((m) => textOf(m as never))
          .join(' + ')}`,
      };
    };
  }

  async function runWithTwoSteers(steeringMode?: 'one-at-a-time' | 'all') {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] },
      sayWhatIsNew(),
      sayWhatIsNew(),
      sayWhatIsNew(),
    ]);
    const agent = new Agent({ model, executor, ...(steeringMode ? { steeringMode } : {}) });
    agent.subscribe((event) => {
      if (event.type === 'tool_start') {
        agent.steer('first steer');
        agent.steer('second steer');
      }
    });
    const events = record(agent);
    const added = await agent.prompt('go');
    return { added, events, model };
  }

  test('one-at-a-time (the default): two queued steers reach the model one per turn', async () => {
    const { added, events } = await runWithTwoSteers();
    expect(assistants(added).slice(1).map(textOf)).toEqual(['got: first steer', 'got: second steer']);
    expect(lastEvent(events)).toMatchObject({ reason: 'stop', turns: 3 });
    // Each steer enters as a user message at the start of its turn, with its events.
    const lines = outline(events);
    for (const turn of [2, 3]) {
      const at = lines.indexOf(`turn_start:${turn}`);
      expect(lines.slice(at, at + 3)).toEqual([`turn_start:${turn}`, 'message_start:user', 'message_end:user']);
    }
  });

  test("steeringMode 'all': both steers reach the model in the next turn", async () => {
    const { added, events } = await runWithTwoSteers('all');
    expect(assistants(added).slice(1).map(textOf)).toEqual(['got: first steer + second steer']);
    expect(lastEvent(events)).toMatchObject({ reason: 'stop', turns: 2 });
  });

  test('a followUp() waits while the model still calls tools, and is delivered when the agent would stop; then the run goes on', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] },
      { toolCalls: [{ name: 'echo', arguments: { text: 'y' } }] },
      sayWhatIsNew(),
      sayWhatIsNew(),
    ]);
    const agent = new Agent({ model, executor });
    let queued = false;
    agent.subscribe((event) => {
      if (event.type === 'tool_start' && !queued) {
        queued = true;
        agent.followUp('now summarise');
      }
    });
    const events = record(agent);
    const added = await agent.prompt('go');

    // Turn 2 and 3 saw no follow-up; it came only after the answer without tools (turn 3).
    expect(model.requests[1]!.messages.some((m) => m.role === 'user' && m.content === 'now summarise')).toBe(false);
    expect(model.requests[2]!.messages.some((m) => m.role === 'user' && m.content === 'now summarise')).toBe(false);
    expect(added.map(roleOf).slice(-3)).toEqual(['assistant', 'user', 'assistant']);
    expect(textOf(assistants(added).at(-1)!)).toBe('got: now summarise');
    expect(lastEvent(events)).toMatchObject({ reason: 'stop', turns: 4 });
    const lines = outline(events);
    const at = lines.indexOf('turn_start:4');
    expect(lines.slice(at, at + 3)).toEqual(['turn_start:4', 'message_start:user', 'message_end:user']);
  });

  test("followUpMode one-at-a-time delivers queued follow-ups one per stop; 'all' delivers them together", async () => {
    const executor = await createExecutor({ tools: [] });
    for (const [followUpMode, expected] of [
      ['one-at-a-time', ['got: start', 'got: more 1', 'got: more 2']],
      ['all', ['got: start', 'got: more 1 + more 2']],
    ] as const) {
      const agent = new Agent({
        model: scriptedModel([sayWhatIsNew(), sayWhatIsNew(), sayWhatIsNew()]),
        executor,
        followUpMode,
      });
      agent.followUp('more 1');
      agent.followUp('more 2');
      const added = await agent.prompt('start');
      expect(assistants(added).map(textOf)).toEqual(expected);
    }
  });

  test('a follow-up is not delivered when the run ends otherwise (a terminating batch); it waits for the next run', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'bye', terminate: true } }] },
      sayWhatIsNew(),
      sayWhatIsNew(),
    ]);
    const agent = new Agent({ model, executor });
    agent.followUp('later');
    const events = record(agent);
    await agent.prompt('first');
    expect(lastEvent(events).reason).toBe('terminate');
    expect(agent.messages.some((m) => m.role === 'user' && m.content === 'later')).toBe(false);
    const added = await agent.prompt('second');
    expect(assistants(added).map(textOf)).toEqual(['got: second', 'got: later']);
  });

  test('rejects bad queue modes', async () => {
    const executor = await createExecutor({ tools: [] });
    expect(() => new Agent({ model: scriptedModel([]), executor, steeringMode: 'some' as never })).toThrow(
      /option steeringMode must be "one-at-a-time" or "all"/,
    );
    expect(() => new Agent({ model: scriptedModel([]), executor, followUpMode: 1 as never })).toThrow(
      /option followUpMode/,
    );
  });
});

describe('Agent: calls that never run, and errorMessage', () => {
  test('calls left open by an abort get tool_start and tool_end (isError) in source order before their result messages', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'echo', arguments: { text: 'one' } },
          { id: 'b', name: 'echo', arguments: { text: 'a long second one' } },
        ],
      },
    ]);
    const agent = new Agent({ model, executor });
    agent.subscribe((event) => {
      if (event.type === 'message_update' && event.delta.type === 'toolcall_start' && event.delta.index === 1)
        agent.abort();
    });
    const events = record(agent);
    const added = await agent.prompt('go');

    const lines = outline(events);
    expect(lines.slice(lines.indexOf('message_end:assistant') + 1)).toEqual([
      'tool_start:a',
      'tool_start:b',
      'tool_end:a',
      'tool_end:b',
      'message_start:toolResult(a)',
      'message_end:toolResult(a)',
      'message_start:toolResult(b)',
      'message_end:toolResult(b)',
      'turn_end:1',
      'agent_end:aborted',
    ]);
    const ends = events.filter((e): e is Extract<AgentEvent, { type: 'tool_end' }> => e.type === 'tool_end');
    expect(ends.map((e) => [e.isError, textOf(e.result)])).toEqual([
      [true, 'Not run: the run was aborted.'],
      [true, 'Not run: the run was aborted.'],
    ]);
    const message = assistants(added)[0]!;
    expect(message.stopReason).toBe('aborted');
    expect(message.errorMessage).toMatch(/aborted while the model was answering/);
  });

  test('calls of a failed model turn get tool events too; an error message without text gets one', async () => {
    const executor = await createExecutor({ tools: [echoTool()] });
    const model: Model = {
      name: 'fails-quietly',
      async *stream() {
        yield {
          type: 'done',
          message: {
            role: 'assistant',
            content: [{ type: 'toolCall', id: 'q', name: 'echo', arguments: { text: 'x' } }],
            stopReason: 'error',
            timestamp: Date.now(),
          },
        };
      },
    };
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('go');
    expect(assistants(added)[0]).toMatchObject({ stopReason: 'error', errorMessage: 'The model turn failed.' });
    expect(outline(events).filter((line) => line.includes(':q'))).toEqual(['tool_start:q', 'tool_end:q']);
    expect(lastEvent(events)).toMatchObject({ reason: 'error', error: 'The model turn failed.' });
  });

  test('calls an executor failed to run get tool events and error results; the run ends with error', async () => {
    const executor = { definitions: [], executeBatch: () => Promise.reject(new Error('pool is gone')) };
    const model = scriptedModel([{ toolCalls: [{ id: 'e1', name: 'echo', arguments: { text: 'x' } }] }]);
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('go');
    expect(outline(events).filter((line) => line.includes('e1'))).toEqual([
      'tool_start:e1',
      'tool_end:e1',
      'message_start:toolResult(e1)',
      'message_end:toolResult(e1)',
    ]);
    expect(textOf(results(added)[0]!)).toBe('The tools could not run: pool is gone');
    expect(lastEvent(events)).toMatchObject({ reason: 'error', error: 'The tools could not run: pool is gone' });
  });
});
