import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import {
  Agent,
  defineTool,
  scriptedModel,
  type AgentEvent,
  type Message,
  type ToolResultMessage,
} from '../src/index.ts';
import { textOf, type AssistantMessage } from '../src/core/messages.ts';
import { fixture, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** An inline payment tool: amounts over 100 need approval. */
function payTool(log: string[]) {
  return defineTool({
    name: 'pay',
    description: 'Pay an amount',
    parameters: Type.Object({ amount: Type.Number(), to: Type.String() }),
    needsApproval: ({ amount }) => amount > 100,
    execute: ({ amount, to }) => {
      log.push(`pay:${amount}:${to}`);
      return { content: [{ type: 'text', text: `paid ${amount} to ${to}` }] };
    },
  });
}

/** Two payments that need approval around one that does not, then an answer built from the results. */
function paymentScript() {
  return scriptedModel([
    {
      text: 'Paying three people.',
      toolCalls: [
        { id: 'big1', name: 'pay', arguments: { amount: 500, to: 'ann' } },
        { id: 'small', name: 'pay', arguments: { amount: '5', to: 'bob' } },
        { id: 'big2', name: 'pay', arguments: { amount: 900, to: 'cy' } },
      ],
    },
    (request) => ({
      text: `Done: ${results(request.messages)
        .map((r) => textOf(r))
        .join('; ')}`,
    }),
    { text: 'a third answer' },
  ]);
}

function record(agent: Agent): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.subscribe((event) => void events.push(event));
  return events;
}

function outline(events: AgentEvent[]): string[] {
  return events
    .filter((event) => event.type !== 'message_update')
    .map((event) => {
      if (event.type === 'tool_start' || event.type === 'tool_end') return `${event.type}:${event.toolCallId}`;
      if (event.type === 'message_start' || event.type === 'message_end') {
        const m = event.message;
        return `${event.type}:${m.role === 'toolResult' ? `toolResult(${m.toolCallId})` : m.role}`;
      }
      if (event.type === 'agent_end') return `agent_end:${event.reason}`;
      if (event.type === 'turn_start' || event.type === 'turn_end') return `${event.type}:${event.turn}`;
      return event.type;
    });
}

const results = (messages: Message[]) => messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
const lastEnd = (events: AgentEvent[]) =>
  events.filter((e) => e.type === 'agent_end').at(-1) as Extract<AgentEvent, { type: 'agent_end' }>;

/** Every tool call has exactly one result right after its assistant message. */
function expectValidTranscript(messages: readonly Message[]): void {
  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    const ids = message.content.flatMap((part) => (part.type === 'toolCall' ? [part.id] : []));
    const following = messages
      .slice(i + 1, i + 1 + ids.length)
      .map((m) => (m.role === 'toolResult' ? m.toolCallId : `(${m.role})`));
    expect(following).toEqual(ids);
  });
}

describe('Agent: approval', () => {
  test('a batch with a call that needs approval runs no call; the run ends with reason approval and the pending calls', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const model = paymentScript();
    const agent = new Agent({ model, executor });
    const events = record(agent);
    const added = await agent.prompt('pay them');

    expect(log).toEqual([]);
    expect(events.some((e) => e.type === 'tool_start')).toBe(false);
    expect(lastEnd(events)).toMatchObject({
      reason: 'approval',
      turns: 1,
      pending: [
        { toolCallId: 'big1', toolName: 'pay', args: { amount: 500, to: 'ann' } },
        { toolCallId: 'big2', toolName: 'pay', args: { amount: 900, to: 'cy' } },
      ],
    });
    expect(events.find((e) => e.type === 'turn_end')).toMatchObject({ toolResults: [] });
    // The transcript ends with the assistant message; its calls stay open for resume().
    expect(added.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(agent.pendingApprovals.map((p) => p.toolCallId)).toEqual(['big1', 'big2']);
    expect(model.requests).toHaveLength(1);
    await expect(agent.prompt('something else')).rejects.toThrow(/wait for approval \(big1, big2\).*agent\.resume/);
  });

  test('resume: approved calls and calls that needed none run, rejected ones get the reason, in source order with events; the loop goes on', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const model = paymentScript();
    const agent = new Agent({ model, executor });
    await agent.prompt('pay them');
    const events = record(agent);
    const added = await agent.resume({ approved: ['big1'], rejected: { big2: 'too expensive' } });

    expect(log).toEqual(['pay:500:ann', 'pay:5:bob']);
    expect(outline(events)).toEqual([
      'agent_start',
      'turn_start:1',
      'tool_start:big1',
      'tool_start:small',
      'tool_start:big2',
      'tool_end:big1',
      'tool_end:small',
      'tool_end:big2',
      'message_start:toolResult(big1)',
      'message_end:toolResult(big1)',
      'message_start:toolResult(small)',
      'message_end:toolResult(small)',
      'message_start:toolResult(big2)',
      'message_end:toolResult(big2)',
      'turn_end:1',
      'turn_start:2',
      'message_start:assistant',
      'message_end:assistant',
      'turn_end:2',
      'agent_end:stop',
    ]);
    const [big1, small, big2] = results(added);
    expect(textOf(big1!)).toBe('paid 500 to ann');
    expect(textOf(small!)).toBe('paid 5 to bob');
    expect(big2).toMatchObject({ isError: true });
    expect(textOf(big2!)).toBe('Not run: a person rejected this call of "pay" (too expensive).');
    expect(textOf(added.at(-1) as AssistantMessage)).toBe(
      'Done: paid 500 to ann; paid 5 to bob; Not run: a person rejected this call of "pay" (too expensive).',
    );
    expect(agent.pendingApprovals).toEqual([]);
    expectValidTranscript(agent.messages);
  });

  test('a pending call neither approved nor rejected stays pending: nothing runs and the run ends with approval again', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: paymentScript(), executor });
    await agent.prompt('pay them');
    const events = record(agent);

    const first = await agent.resume({ approved: ['big1'] });
    expect(first).toEqual([]);
    expect(log).toEqual([]);
    expect(outline(events)).toEqual(['agent_start', 'agent_end:approval']);
    expect(lastEnd(events).pending).toEqual([{ toolCallId: 'big2', toolName: 'pay', args: { amount: 900, to: 'cy' } }]);
    // The earlier decision is kept: big1 may not be decided again, big2 still may.
    await expect(agent.resume({ rejected: { big1: 'changed my mind' } })).rejects.toThrow(
      /"big1" is not waiting for approval/,
    );

    await agent.resume({ approved: ['big2'] });
    expect(log).toEqual(['pay:500:ann', 'pay:5:bob', 'pay:900:cy']);
    expect(lastEnd(events).reason).toBe('stop');
  });

  test('resume rejects clearly, and changes nothing, for an id that is not pending, an id decided twice, or nothing to resume', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: paymentScript(), executor });
    await expect(agent.resume({ approved: ['x'] })).rejects.toThrow(/no tool call waits for approval/);
    await agent.prompt('pay them');

    await expect(agent.resume({ approved: ['big1', 'nope'] })).rejects.toThrow(
      /"nope" is not waiting for approval. Waiting: big1, big2/,
    );
    await expect(agent.resume({ approved: ['small'] })).rejects.toThrow(/"small" is not waiting/);
    await expect(agent.resume({ approved: ['big1'], rejected: { big1: 'no' } })).rejects.toThrow(
      /both approved and rejected/,
    );
    await expect(agent.resume({ approved: 'big1' as never })).rejects.toThrow(/approved must be an array/);
    expect(log).toEqual([]);
    expect(agent.pendingApprovals.map((p) => p.toolCallId)).toEqual(['big1', 'big2']);
  });

  test('abort() with pending approvals answers every call of the batch with an error result, so the transcript can go to a model again', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const model = paymentScript();
    const agent = new Agent({ model, executor });
    await agent.prompt('pay them');
    const events = record(agent);
    agent.abort();

    expect(agent.pendingApprovals).toEqual([]);
    expect(log).toEqual([]);
    expect(results(agent.messages).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['big1', true, 'Not run: the run was aborted.'],
      ['small', true, 'Not run: the run was aborted.'],
      ['big2', true, 'Not run: the run was aborted.'],
    ]);
    expect(outline(events)).toEqual([
      'tool_start:big1',
      'tool_start:small',
      'tool_start:big2',
      'tool_end:big1',
      'tool_end:small',
      'tool_end:big2',
      'message_start:toolResult(big1)',
      'message_end:toolResult(big1)',
      'message_start:toolResult(small)',
      'message_end:toolResult(small)',
      'message_start:toolResult(big2)',
      'message_end:toolResult(big2)',
    ]);
    expectValidTranscript(agent.messages);
    await expect(agent.resume({ approved: ['big1'] })).rejects.toThrow(/nothing to resume/);

    await agent.prompt('never mind');
    expectValidTranscript(model.requests[1]!.messages);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: 'never mind' });
  });

  test('abort() during a resumed batch answers the calls not yet run and ends the run aborted', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts'), payTool([])] });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'wait', name: 'probe', arguments: { action: 'honour-signal', ms: 20_000 } },
          { id: 'big', name: 'pay', arguments: { amount: 500, to: 'ann' } },
        ],
      },
      { text: 'never' },
    ]);
    const agent = new Agent({ model, executor });
    await agent.prompt('go');
    expect(agent.pendingApprovals.map((p) => p.toolCallId)).toEqual(['big']);
    const events = record(agent);
    agent.subscribe((event) => {
      if (event.type === 'tool_start' && event.toolCallId === 'wait') setTimeout(() => agent.abort(), 50);
    });
    const added = await agent.resume({ approved: ['big'] });
    expect(lastEnd(events).reason).toBe('aborted');
    expect(results(added)[0]).toMatchObject({ toolCallId: 'wait', isError: true });
    expect(model.requests).toHaveLength(1);
    expectValidTranscript(agent.messages);
  });
});

describe('Agent: snapshot', () => {
  test('snapshot() is plain JSON with a version; a new Agent restored from it resumes the paused batch', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: paymentScript(), executor });
    await agent.prompt('pay them');
    agent.steer('also say thanks');
    agent.followUp('and then summarise');

    const snapshot = agent.snapshot();
    const saved = JSON.stringify(snapshot);
    expect(JSON.parse(saved)).toEqual(snapshot);
    expect(snapshot).toMatchObject({
      format: 'toolpool.agent',
      version: 3,
      steering: [{ role: 'user', content: 'also say thanks' }],
      followUps: [{ role: 'user', content: 'and then summarise' }],
      approval: { pending: [{ toolCallId: 'big1' }, { toolCallId: 'big2' }], approved: [], rejected: {} },
    });
    expect(snapshot.messages).toEqual(agent.messages);

    const model = scriptedModel([
      (request) => ({
        text: `seen: ${request.messages.map((m) => (m.role === 'user' ? textOf(m) : m.role)).join(', ')}`,
      }),
      (request) => ({ text: `then: ${textOf(request.messages.at(-1) as Message & { role: 'user' })}` }),
    ]);
    const again = new Agent({ model, executor, snapshot: JSON.parse(saved) });
    expect(again.pendingApprovals.map((p) => p.toolCallId)).toEqual(['big1', 'big2']);
    const events = record(again);
    await again.resume({ approved: ['big1', 'big2'] });
    expect(log).toEqual(['pay:500:ann', 'pay:5:bob', 'pay:900:cy']);
    // The queued steer reached the model after the results; the follow-up came when it would have stopped.
    expect(textOf(model.requests[0]!.messages.at(-1) as never)).toBe('also say thanks');
    expect(textOf(again.messages.at(-1) as AssistantMessage)).toBe('then: and then summarise');
    // Turn 1 is the resumed batch, 2 answers the steer, 3 the follow-up.
    expect(lastEnd(events)).toMatchObject({ reason: 'stop', turns: 3 });
    expectValidTranscript(again.messages);
  });

  test('decisions given so far travel in the snapshot: a restored agent runs them once the rest is decided', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: paymentScript(), executor });
    await agent.prompt('pay them');
    await agent.resume({ rejected: { big1: 'not ann' } });
    const snapshot = JSON.parse(JSON.stringify(agent.snapshot()));
    expect(snapshot.approval).toEqual({
      pending: [{ toolCallId: 'big2', toolName: 'pay', args: { amount: 900, to: 'cy' } }],
      approved: [],
      rejected: { big1: 'not ann' },
    });
    const again = new Agent({ model: scriptedModel([{ text: 'ok' }]), executor, snapshot });
    const added = await again.resume({ approved: ['big2'] });
    expect(log).toEqual(['pay:5:bob', 'pay:900:cy']);
    expect(results(added).map((r) => [r.toolCallId, r.isError])).toEqual([
      ['big1', true],
      ['small', false],
      ['big2', false],
    ]);
  });

  test('a snapshot taken in one process is resumed in another (module tool, worker needsApproval)', async () => {
    const executor = await createExecutor({ tools: [fixture('pay.ts')] });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'p1', name: 'pay', arguments: { amount: 2000, to: 'dana' } },
          { id: 'p2', name: 'pay', arguments: { amount: 3, to: 'eve' } },
        ],
      },
    ]);
    const agent = new Agent({ model, executor });
    await agent.prompt('pay dana and eve');
    expect(agent.pendingApprovals).toEqual([{ toolCallId: 'p1', toolName: 'pay', args: { amount: 2000, to: 'dana' } }]);
    const saved = JSON.stringify(agent.snapshot());

    const child = await runChild(saved, JSON.stringify({ approved: ['p1'] }));
    expect(child.pid).not.toBe(process.pid);
    const texts = (child.added as Message[]).map((m) =>
      m.role === 'assistant' || m.role === 'toolResult' ? textOf(m as never) : m.role,
    );
    expect(texts).toEqual(['paid 2000 to dana', 'paid 3 to eve', 'Results: paid 2000 to dana; paid 3 to eve']);
    expect(child.events.at(-1)).toBe('agent_end:stop');
    expect(child.events.filter((e) => e === 'tool_start')).toHaveLength(2);
  });

  test('a snapshot from another version or of another shape is refused with a clear error', async () => {
    const executor = await createExecutor({ tools: [payTool([])] });
    const model = scriptedModel([]);
    const good = new Agent({ model, executor }).snapshot();
    expect(() => new Agent({ model, executor, snapshot: { ...good, version: 1 as never } })).toThrow(
      /option snapshot has version 1, and this toolpool reads version 3 only/,
    );
    expect(() => new Agent({ model, executor, snapshot: { ...good, runId: undefined as never } })).toThrow(
      /runId must be a non-empty string/,
    );
    expect(() => new Agent({ model, executor, snapshot: { ...good, format: 'other' as never } })).toThrow(
      /not an agent snapshot: its format is "other"/,
    );
    expect(() => new Agent({ model, executor, snapshot: { ...good, messages: 'x' as never } })).toThrow(
      /messages must be an array/,
    );
    expect(
      () =>
        new Agent({
          model,
          executor,
          snapshot: {
            ...good,
            approval: { pending: [{ toolCallId: 'ghost', toolName: 'pay', args: {} }], approved: [], rejected: {} },
          },
        }),
    ).toThrow(/approval names calls that are not the tool calls of the last assistant message/);
    expect(() => new Agent({ model, executor, snapshot: good, messages: [] })).toThrow(
      /snapshot cannot be given together with messages/,
    );
  });

  test('snapshot() while a run is active throws; a restored idle agent prompts as usual', async () => {
    const executor = await createExecutor({ tools: [] });
    const agent = new Agent({ model: scriptedModel([{ text: 'one two three' }]), executor });
    const running = agent.prompt('hi');
    expect(() => agent.snapshot()).toThrow(/a run is in progress/);
    await running;
    const again = new Agent({ model: scriptedModel([{ text: 'again' }]), executor, snapshot: agent.snapshot() });
    const added = await again.prompt('more');
    expect(again.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(textOf(added.at(-1) as AssistantMessage)).toBe('again');
  });
});

const childScript = fileURLToPath(new URL('./support/resume-in-child.ts', import.meta.url));

function runChild(snapshot: string, decisions: string): Promise<{ added: unknown[]; events: string[]; pid: number }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', childScript, decisions],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`child failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout));
      },
    );
    child.stdin!.end(snapshot);
  });
}
