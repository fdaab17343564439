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
import { runAgentLoop, type AgentLoopConfig, type AgentTool, type StreamFn } from '@mariozechner/pi-agent-core';
import {
  Type,
  createAssistantMessageEventStream,
  type AssistantMessage,
  type Message,
  type Model,
} from '@mariozechner/pi-ai';
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

/** The same trivial tool as bench/tools/noop.ts, as a pi-agent-core tool. */
const piNoop: AgentTool = {
  name: 'noop',
  label: 'noop',
  description: 'Benchmark tool: returns its argument as text.',
  parameters: Type.Object({ n: Type.Number() }),
  execute: async (_id, params) => ({
    content: [{ type: 'text', text: String((params as { n: number }).n) }],
    details: undefined,
  }),
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
      onUpdate: (partial) => onUpdate?.({ content: piContent(partial.content), details: partial.details }),
      host: {},
      elicit: () => Promise.reject(new Error('no one to ask')),
    });
    return { content: piContent(result.content), details: result.details };
  },
};

/** 0.73's messages and loop for a scripted run (see measureToolStep). */
function scriptedLoop(tools: AgentTool[]): ScriptedLoop<AssistantMessage> {
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
      const context = { systemPrompt: '', messages: [], tools };
      return runAgentLoop(
        [{ role: 'user', content: 'go', timestamp: Date.now() }],
        context,
        config,
        emit,
        undefined,
        streamFn,
      );
    },
  };
}

const TOOLS: Record<PiTool, AgentTool> = { noop: piNoop, hash: piHash };

export const peer: PiPeer = {
  name: `@mariozechner/pi-agent-core ${packageVersion('@mariozechner/pi-agent-core')}`,
  harness: (tools) => {
    const loop = scriptedLoop(tools.map((name) => TOOLS[name]));
    return { batch: (calls, hooks) => measureToolStep(loop, calls, hooks) };
  },
};
