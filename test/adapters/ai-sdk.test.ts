import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, isStepCount, streamText, type ModelMessage } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, test } from 'vitest';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { aiSdkTools, ToolpoolToolError, type AiSdkToolOutput } from '../../src/adapters/ai-sdk/index.ts';
import { Type } from '@sinclair/typebox';
import { defineTool, type ToolEndEvent } from '../../src/index.ts';
import { PIXEL } from '../fixtures/served/picture.ts';
import { exampleTool, fixture, useExecutors } from '../support/executors.ts';

// `ai` 7 declares engines node >=22 and the contract supports toolpool/ai-sdk on Node 22+ only,
// so on Node 20 these tests are skipped rather than run against an unsupported line.
const unsupportedNode = Number(process.versions.node.split('.')[0]) < 22;

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;
type ScriptedCall = { id: string; name: string; input: object };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** One model turn that calls tools. */
function toolCalls(...calls: ScriptedCall[]): GenerateResult {
  return {
    content: calls.map(({ id, name, input }) => ({
      type: 'tool-call',
      toolCallId: id,
      toolName: name,
      input: JSON.stringify(input),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** One model turn that answers with text. */
function answer(text: string): GenerateResult {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
}

/** The tool results the model was sent in its second turn, as the SDK put them in the prompt. */
function toolResultsSentToModel(model: MockLanguageModelV4) {
  const prompt = model.doGenerateCalls[1]!.prompt;
  return prompt
    .flatMap((message) => (message.role === 'tool' ? message.content : []))
    .filter((part) => part.type === 'tool-result');
}

const served = (name: string) => fixture(`served/${name}`);
const textOf = (output: AiSdkToolOutput) =>
  output.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

describe.skipIf(unsupportedNode)('aiSdkTools with generateText and the AI SDK mock model', () => {
  const open = useExecutors();
  const executorWith = (limits = {}) =>
    open({
      tools: [
        exampleTool('calculator.ts'),
        exampleTool('hash.ts'),
        exampleTool('flaky.ts'),
        served('meet.ts'),
        served('picture.ts'),
      ],
      limits,
    });

  test('each tool goes to the model with its description and JSON schema', async () => {
    const executor = await executorWith();
    const model = new MockLanguageModelV4({ doGenerate: answer('nothing to do') });
    await generateText({ model, tools: aiSdkTools(executor), prompt: 'hi' });
    const calculator = model.doGenerateCalls[0]!.tools!.find((tool) => tool.name === 'calculator');
    expect(calculator).toMatchObject({
      type: 'function',
      description: expect.stringContaining('Evaluate an arithmetic expression'),
      inputSchema: { type: 'object', required: ['expression'], properties: { precision: { type: 'integer' } } },
    });
  });

  test('a result feeds the next step; the model reads the content, details stay in the output; "1" is coerced to 1', async () => {
    const executor = await executorWith();
    const model = new MockLanguageModelV4({
      doGenerate: [
        toolCalls({ id: 'c1', name: 'calculator', input: { expression: '10 / 4', precision: '1' } }),
        answer('It is 2.5.'),
      ],
    });
    const result = await generateText({
      model,
      tools: aiSdkTools(executor),
      prompt: 'What is 10 / 4?',
      stopWhen: isStepCount(3),
    });
    expect(result.text).toBe('It is 2.5.');
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]!.toolResults[0]).toMatchObject({
      toolCallId: 'c1',
      output: { content: [{ type: 'text', text: '10 / 4 = 2.5' }], details: { value: 2.5 } },
    });
    expect(toolResultsSentToModel(model)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', output: { type: 'text', value: '10 / 4 = 2.5' } }),
    ]);
  });

  test('an image part reaches the model as a file part', async () => {
    const executor = await executorWith();
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls({ id: 'p', name: 'picture', input: {} }), answer('red')],
    });
    await generateText({ model, tools: aiSdkTools(executor), prompt: 'show me', stopWhen: isStepCount(2) });
    expect(toolResultsSentToModel(model)[0]).toMatchObject({
      output: {
        type: 'content',
        value: [
          { type: 'text', text: 'one red pixel' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PIXEL } },
        ],
      },
    });
  });

  test('a timeout, a thrown error and a validation failure are tool errors carrying toolpool text', async () => {
    const executor = await executorWith({ timeoutMs: 300, abortGraceMs: 100 });
    const model = new MockLanguageModelV4({
      doGenerate: [
        toolCalls(
          { id: 'hang', name: 'flaky', input: { mode: 'hang' } },
          { id: 'throw', name: 'flaky', input: { mode: 'throw' } },
          { id: 'bad', name: 'calculator', input: { precision: 2 } },
        ),
        answer('sorry'),
      ],
    });
    const result = await generateText({ model, tools: aiSdkTools(executor), prompt: 'go', stopWhen: isStepCount(2) });
    const errors = result.steps[0]!.content.filter((part) => part.type === 'tool-error');
    expect(errors.map((part) => part.toolCallId)).toEqual(['hang', 'throw', 'bad']);
    for (const part of errors) expect(part.error).toBeInstanceOf(ToolpoolToolError);
    const sent = toolResultsSentToModel(model).map((part) => part.output);
    expect(sent).toEqual([
      {
        type: 'error-text',
        value:
          'Tool timed out after 300 ms (limit timeoutMs); it ignored its signal and was killed after the grace period.',
      },
      { type: 'error-text', value: 'the flaky service answered 503 Service Unavailable' },
      {
        type: 'error-text',
        value: expect.stringMatching(/^Validation failed for tool "calculator":[\s\S]*expression/),
      },
    ]);
  });

  test('two calls in one step run at the same time (each meets the other)', async () => {
    const executor = await executorWith();
    const dir = await mkdtemp(join(tmpdir(), 'toolpool-meet-'));
    try {
      const model = new MockLanguageModelV4({
        doGenerate: [
          toolCalls(
            { id: 'a', name: 'meet', input: { dir, who: 'a', count: 2 } },
            { id: 'b', name: 'meet', input: { dir, who: 'b', count: 2 } },
          ),
          answer('met'),
        ],
      });
      const result = await generateText({
        model,
        tools: aiSdkTools(executor),
        prompt: 'meet',
        stopWhen: isStepCount(2),
      });
      expect(result.steps[0]!.toolResults.map((part) => (part.output as AiSdkToolOutput).content)).toEqual([
        [{ type: 'text', text: 'a met a,b' }],
        [{ type: 'text', text: 'b met a,b' }],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("generateText's abortSignal reaches the running tool: its ctx.signal fires and it stops", async () => {
    // It honours its signal: a grace of seconds, so a starved worker is not taken for one that ignores it.
    const executor = await executorWith({ abortGraceMs: 3_000 });
    const dir = await mkdtemp(join(tmpdir(), 'toolpool-meet-'));
    const controller = new AbortController();
    const ends: ToolEndEvent[] = [];
    executor.subscribe((event) => {
      // Its "arrived" update says the tool is running (and waiting, on its signal); abort then.
      if (event.type === 'tool_update') controller.abort();
      if (event.type === 'tool_end') ends.push(event);
    });
    try {
      const model = new MockLanguageModelV4({
        doGenerate: [toolCalls({ id: 'w', name: 'meet', input: { dir, who: 'alone', count: 2 } }), answer('never')],
      });
      const run = generateText({
        model,
        tools: aiSdkTools(executor),
        prompt: 'wait',
        stopWhen: isStepCount(2),
        abortSignal: controller.signal,
      });
      await expect(run).rejects.toThrow(/abort/i);
      await expect.poll(() => ends.length).toBe(1);
      expect(ends[0]).toMatchObject({
        toolCallId: 'w',
        isError: true,
        result: { content: [{ type: 'text', text: 'Tool call aborted: the tool stopped when its signal fired.' }] },
      });
      expect(model.doGenerateCalls).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(unsupportedNode)('aiSdkTools with streamText', () => {
  const open = useExecutors();

  test('ctx.onUpdate streams out as preliminary tool results before the final one', async () => {
    const executor = await open({ tools: [exampleTool('hash.ts')] });
    let turn = 0;
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>(
          turn++ === 0
            ? [
                { type: 'stream-start', warnings: [] },
                {
                  type: 'tool-call',
                  toolCallId: 'h',
                  toolName: 'hash',
                  input: JSON.stringify({ text: 'x', rounds: 40_000, progressSteps: 4 }),
                },
                { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
              ]
            : [
                { type: 'stream-start', warnings: [] },
                { type: 'text-start', id: 't' },
                { type: 'text-delta', id: 't', delta: 'done' },
                { type: 'text-end', id: 't' },
                { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
              ],
        ),
      }),
    });
    const result = streamText({ model, tools: aiSdkTools(executor), prompt: 'hash', stopWhen: isStepCount(2) });
    const results: Array<{ preliminary: boolean; text: string }> = [];
    for await (const part of result.fullStream) {
      if (part.type === 'tool-result')
        results.push({ preliminary: part.preliminary === true, text: textOf(part.output as AiSdkToolOutput) });
    }
    const final = results.at(-1)!;
    expect(final).toEqual({ preliminary: false, text: expect.stringMatching(/^[0-9a-f]{64}$/) });
    // The adapter yields each update once and the result once. The SDK's executeTool (provider-utils) then
    // sends the last value an iterable execute yields twice, as a preliminary and as the final result:
    // that echo is the SDK's and cannot be avoided from inside a tool (see README, "Use with the AI SDK").
    expect(results.filter((r) => r.preliminary).map((r) => r.text)).toEqual(['25%', '50%', '75%', '100%', final.text]);
    expect(await result.text).toBe('done');
  });
});

describe.skipIf(unsupportedNode)("aiSdkTools: needsApproval is the AI SDK's own tool approval", () => {
  const open = useExecutors();
  const ran: string[] = [];
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploy a service',
    parameters: Type.Object({ service: Type.String(), replicas: Type.Integer() }),
    needsApproval: true,
    execute: ({ service, replicas }) => {
      ran.push(`${service} x${replicas}`);
      return { content: [{ type: 'text', text: `deployed ${service}` }] };
    },
  });
  const executorWith = () => open({ tools: [deploy, fixture('pay.ts')] });

  /** The first generateText: the model asks for a call; the SDK returns its approval request and runs nothing. */
  async function askFor(executor: Awaited<ReturnType<typeof executorWith>>, name: string, input: object) {
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls({ id: 'c1', name, input }), answer('after the tool')],
    });
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const tools = aiSdkTools(executor);
    const first = await generateText({ model, tools, messages, stopWhen: isStepCount(3) });
    return { model, tools, messages: [...messages, ...first.response.messages], first };
  }

  test('generateText returns a tool-approval-request and runs nothing; an approving response runs the call', async () => {
    ran.length = 0;
    const executor = await executorWith();
    const { model, tools, messages, first } = await askFor(executor, 'deploy', { service: 'api', replicas: '2' });
    const requests = first.content.filter((part) => part.type === 'tool-approval-request');
    expect(requests).toEqual([
      expect.objectContaining({ toolCall: expect.objectContaining({ toolCallId: 'c1', toolName: 'deploy' }) }),
    ]);
    expect(ran).toEqual([]);
    expect(model.doGenerateCalls).toHaveLength(1);
    const approvalId = requests[0]!.approvalId;
    const second = await generateText({
      model,
      tools,
      messages: [
        ...messages,
        { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: true }] },
      ],
      stopWhen: isStepCount(3),
    });
    expect(ran).toEqual(['api x2']);
    expect(second.text).toBe('after the tool');
    expect(toolResultsSentToModel(model)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', output: { type: 'text', value: 'deployed api' } }),
    ]);
  });

  test('a denying response runs nothing; the model reads the denial', async () => {
    ran.length = 0;
    const executor = await executorWith();
    const { model, tools, messages, first } = await askFor(executor, 'deploy', { service: 'api', replicas: 1 });
    const { approvalId } = first.content.find((part) => part.type === 'tool-approval-request')!;
    await generateText({
      model,
      tools,
      messages: [
        ...messages,
        {
          role: 'tool',
          content: [{ type: 'tool-approval-response', approvalId, approved: false, reason: 'not on a Friday' }],
        },
      ],
      stopWhen: isStepCount(3),
    });
    expect(ran).toEqual([]);
    expect(toolResultsSentToModel(model)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', output: { type: 'execution-denied', reason: 'not on a Friday' } }),
    ]);
  });

  test("a needsApproval function decides per call, in the tool's worker: a small payment runs at once, a large one asks", async () => {
    const executor = await executorWith();
    const small = await askFor(executor, 'pay', { amount: 5, to: 'ann' });
    expect(small.first.content.some((part) => part.type === 'tool-approval-request')).toBe(false);
    expect(small.first.steps[0]!.toolResults[0]).toMatchObject({
      output: { content: [{ type: 'text', text: 'paid 5 to ann' }] },
    });
    const large = await askFor(executor, 'pay', { amount: 500, to: 'bob' });
    expect(large.first.content.filter((part) => part.type === 'tool-approval-request')).toHaveLength(1);
    expect(large.first.steps[0]!.toolResults).toEqual([]);
  });

  test('a toolApproval setting that skips the person does not approve for toolpool: the call is refused, saying why', async () => {
    ran.length = 0;
    const executor = await executorWith();
    const model = new MockLanguageModelV4({
      doGenerate: [toolCalls({ id: 'c1', name: 'deploy', input: { service: 'api', replicas: 1 } }), answer('ok')],
    });
    await generateText({
      model,
      tools: aiSdkTools(executor),
      toolApproval: { deploy: 'not-applicable' },
      prompt: 'go',
      stopWhen: isStepCount(2),
    });
    expect(ran).toEqual([]);
    expect(toolResultsSentToModel(model)[0]!.output).toEqual({
      type: 'error-text',
      value: expect.stringMatching(
        /^Not run: "deploy" needs a person's approval, and the AI SDK ran it without asking: a toolApproval setting/,
      ),
    });
  });
});
