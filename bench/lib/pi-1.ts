/**
 * `@earendil-works/pi-agent-core` 1.x (Node 22.19+) as the peer, measured as
 * pi-0.73.ts measures 0.73: its own `runAgentLoop` with a scripted stream
 * function, one tool batch per run, the span from the `message_end` of the
 * assistant message that asked for the tools to the `turn_end` carrying
 * their results. What changed in 1.x for this harness: schemas come from
 * `@earendil-works/pi-schema` (plain JSON Schema builders) instead of
 * TypeBox, and the context has no `systemPrompt`.
 */
import { runAgentLoop, type AgentEvent, type AgentLoopConfig, type AgentTool, type StreamFn } from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream, type AssistantMessage, type JsonObject, type Message, type Model } from '@earendil-works/pi-ai';
import { int, lit, obj, num, opt, str, union } from '@earendil-works/pi-schema';
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

const NEVER_ABORTED = new AbortController().signal;

/** The same trivial tool as bench/tools/noop.ts. */
const noop: AgentTool<ReturnType<typeof noopParameters>> = {
  name: 'noop',
  label: 'noop',
  description: 'Benchmark tool: returns its argument as text.',
  parameters: noopParameters(),
  execute: async (_id, params) => ({ content: [{ type: 'text', text: String(params.n) }], details: undefined }),
};

function noopParameters() {
  return obj({ n: num() });
}

/** tools/hash.ts itself (the very same `execute`), with its schema restated in pi-schema. */
const hash: AgentTool<ReturnType<typeof hashParameters>> = {
  name: 'hash',
  label: 'Hash (stretched)',
  description: hashTool.description,
  parameters: hashParameters(),
  execute: async (id, params, signal, onUpdate) => {
    const result = await hashTool.execute(params as never, {
      callId: id,
      signal: signal ?? NEVER_ABORTED,
      onUpdate: (partial) => void onUpdate?.({ content: partial.content, details: partial.details }),
      host: {},
    });
    return { content: result.content, details: result.details };
  },
};

function hashParameters() {
  return obj({
    text: str(),
    rounds: int({ minimum: 1, maximum: 50_000_000 }),
    algorithm: opt(union([lit('sha256'), lit('sha512')])),
    progressSteps: opt(int({ minimum: 0, maximum: 1000 })),
  });
}

class PiHarness {
  readonly #config: AgentLoopConfig = { model: MODEL, convertToLlm: (messages) => messages as Message[], toolExecution: 'parallel' };

  constructor(private readonly tools: AgentTool<never>[]) {}

  /** One agent-loop run that executes `calls` as one batch; returns the tool step's span. */
  async batch(calls: ToolCall[], hooks: SpanHooks = {}): Promise<PiBatch> {
    const toolTurn = assistant(
      calls.map((call) => ({ type: 'toolCall' as const, id: call.id, name: call.name, arguments: call.arguments as JsonObject })),
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
    let results: unknown[] = [];
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
    await runAgentLoop([{ role: 'user', content: 'go', timestamp: Date.now() }], { messages: [], tools: this.tools }, this.#config, emit, undefined, streamFn);
    if (start === 0 || end === 0) throw new Error('pi-agent-core: the scripted run did not execute its tool batch');
    return { ns: end - start, results };
  }
}

const TOOLS: Record<PiTool, AgentTool<never>> = { noop: noop as AgentTool<never>, hash: hash as AgentTool<never> };

export const peer: PiPeer = {
  name: `@earendil-works/pi-agent-core ${packageVersion('@earendil-works/pi-agent-core')}`,
  harness: (tools) => new PiHarness(tools.map((name) => TOOLS[name])),
};
