/**
 * pi-agent-core 0.73 (`@mariozechner/pi-agent-core`, the peer on Node 20) as the peer: its own agent loop (`runAgentLoop`) with
 * a scripted model. The stream function answers the first turn with an
 * assistant message holding the tool calls and the second with a final
 * text, so one loop run executes exactly one batch, in process, the way
 * pi-agent-core runs every tool.
 *
 * The measured span is the loop's tool step: from the `message_end` of the
 * assistant message that asked for the tools to the `turn_end` that carries
 * their results. It holds what `executor.executeBatch` does in toolpool
 * (start events, argument validation, execution, end events, result
 * messages) and none of the model turns around it.
 */
import { runAgentLoop, type AgentEvent, type AgentLoopConfig, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core';
import { Type, createAssistantMessageEventStream, type AssistantMessage, type Message, type Model } from '@mariozechner/pi-ai';
import hashTool from '../../tools/hash.ts';
import type { ToolCall } from '../../src/tool.ts';
import { nowNs } from './clock.ts';
import { packageVersion } from './machine.ts';
import type { PiBatch, PiPeer, PiTool, SpanHooks } from './pi.ts';

const MODEL: Model<string> = {
  id: 'scripted',
  name: 'Scripted model',
  api: 'scripted',
  provider: 'scripted',
  baseUrl: '',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 1_000_000,
};

const NO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

function assistant(content: AssistantMessage['content'], stopReason: 'toolUse' | 'stop'): AssistantMessage {
  return { role: 'assistant', content, api: MODEL.api, provider: MODEL.provider, model: MODEL.id, usage: NO_USAGE, stopReason, timestamp: Date.now() };
}

/** The same trivial tool as bench/tools/noop.ts, as a pi-agent-core tool. */
const piNoop: AgentTool = {
  name: 'noop',
  label: 'noop',
  description: 'Benchmark tool: returns its argument as text.',
  parameters: Type.Object({ n: Type.Number() }),
  execute: async (_id, params) => ({ content: [{ type: 'text', text: String((params as { n: number }).n) }], details: undefined }),
};

const NEVER_ABORTED = new AbortController().signal;

/** tools/hash.ts itself (the very same `execute`), with its schema restated in pi's TypeBox. */
const piHash: AgentTool = {
  name: 'hash',
  label: 'Hash (stretched)',
  description: hashTool.description,
  parameters: Type.Object({
    text: Type.String(),
    rounds: Type.Integer({ minimum: 1, maximum: 50_000_000 }),
    algorithm: Type.Optional(Type.Union([Type.Literal('sha256'), Type.Literal('sha512')])),
    progressSteps: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
  }),
  execute: async (id, params, signal, onUpdate) => {
    const result = await hashTool.execute(params as never, {
      callId: id,
      signal: signal ?? NEVER_ABORTED,
      onUpdate: (partial) => onUpdate?.({ content: partial.content, details: partial.details }),
      host: {},
    });
    return { content: result.content, details: result.details };
  },
};

class PiHarness {
  readonly #config: AgentLoopConfig;

  constructor(private readonly tools: AgentTool[]) {
    this.#config = { model: MODEL, convertToLlm: (messages) => messages as Message[], toolExecution: 'parallel' };
  }

  /** One agent-loop run that executes `calls` as one batch; returns the tool step's span. */
  async batch(calls: ToolCall[], hooks: SpanHooks = {}): Promise<PiBatch> {
    const toolTurn = assistant(
      calls.map((call) => ({ type: 'toolCall' as const, id: call.id, name: call.name, arguments: call.arguments as Record<string, unknown> })),
      'toolUse',
    );
    const finalTurn = assistant([{ type: 'text', text: 'done' }], 'stop');
    let turn = 0;
    const streamFn: StreamFn = () => {
      const message = turn++ === 0 ? toolTurn : finalTurn;
      const stream = createAssistantMessageEventStream();
      stream.push({ type: 'done', reason: message.stopReason === 'toolUse' ? 'toolUse' : 'stop', message });
      return stream;
    };
    let start = 0;
    let end = 0;
    let results: Message[] = [];
    const emit = async (event: AgentEvent) => {
      if (event.type === 'message_end' && event.message === toolTurn) {
        await hooks.before?.();
        start = nowNs();
      } else if (event.type === 'turn_end' && event.message === toolTurn) {
        end = nowNs();
        results = event.toolResults;
        await hooks.after?.();
      }
    };
    const context = { systemPrompt: '', messages: [], tools: this.tools };
    await runAgentLoop([{ role: 'user', content: 'go', timestamp: Date.now() }], context, this.#config, emit, undefined, streamFn);
    if (start === 0 || end === 0) throw new Error('pi-agent-core: the scripted run did not execute its tool batch');
    return { ns: end - start, results };
  }
}

const TOOLS: Record<PiTool, AgentTool> = { noop: piNoop, hash: piHash };

export const peer: PiPeer = {
  name: `@mariozechner/pi-agent-core ${packageVersion('@mariozechner/pi-agent-core')}`,
  harness: (tools) => new PiHarness(tools.map((name) => TOOLS[name])),
};
