/**
 * `@earendil-works/pi-agent-core` 1.x (Node 22.19+) as the peer, measured as
 * pi-0.73.ts measures 0.73: its own `runAgentLoop` with a scripted stream
 * function, one tool batch per run, the span from the `message_end` of the
 * assistant message that asked for the tools to the `turn_end` carrying
 * their results. What changed in 1.x for this harness: schemas come from
 * `@earendil-works/pi-schema` (plain JSON Schema builders) instead of
 * TypeBox, and the context has no `systemPrompt`.
 */
import { runAgentLoop, type AgentLoopConfig, type AgentTool, type StreamFn } from '@earendil-works/pi-agent-core';
import {
  createAssistantMessageEventStream,
  type AssistantMessage,
  type Message,
  type Model,
} from '@earendil-works/pi-ai';
import { int, lit, obj, num, opt, str, union } from '@earendil-works/pi-schema';
import hashTool from '../../tools/hash.ts';
import { packageVersion } from './package-version.ts';
import {
  measureToolStep,
  piContent,
  scriptedStreamFn,
  scriptedTurn,
  SCRIPTED_MODEL,
  type PiPeer,
  type PiTool,
  type ScriptedLoop,
} from './pi.ts';

const MODEL: Model<string> = SCRIPTED_MODEL;

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
      onUpdate: (partial) => void onUpdate?.({ content: piContent(partial.content), details: partial.details }),
      host: {},
      elicit: () => Promise.reject(new Error('no one to ask')),
    });
    return { content: piContent(result.content), details: result.details };
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

/** 1.x's messages and loop for a scripted run (see measureToolStep). */
function scriptedLoop(tools: AgentTool<never>[]): ScriptedLoop<AssistantMessage> {
  const config: AgentLoopConfig = {
    model: MODEL,
    convertToLlm: (messages) => messages as Message[],
    toolExecution: 'parallel',
  };
  return {
    // Its tool-call arguments are the bench's own objects: JSON, as the loop expects.
    assistant: (calls) => scriptedTurn(calls) as AssistantMessage,
    run: (next, emit) => {
      const streamFn: StreamFn = scriptedStreamFn(next, createAssistantMessageEventStream);
      return runAgentLoop(
        [{ role: 'user', content: 'go', timestamp: Date.now() }],
        { messages: [], tools },
        config,
        emit,
        undefined,
        streamFn,
      );
    },
  };
}

const TOOLS: Record<PiTool, AgentTool<never>> = { noop: noop as AgentTool<never>, hash: hash as AgentTool<never> };

export const peer: PiPeer = {
  name: `@earendil-works/pi-agent-core ${packageVersion('@earendil-works/pi-agent-core')}`,
  harness: (tools) => {
    const loop = scriptedLoop(tools.map((name) => TOOLS[name]));
    return { batch: (calls, hooks) => measureToolStep(loop, calls, hooks) };
  },
};
