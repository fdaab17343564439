/**
 * The peer, pi-agent-core: its own agent loop (`runAgentLoop`) with a
 * scripted model, running tools in process. It moved to
 * `@earendil-works/pi-agent-core` 1.x, which needs Node 22.19+; on older
 * lines (Node 20) the last release under the old name,
 * `@mariozechner/pi-agent-core` 0.73, is the peer. Both harnesses measure
 * the same span (see pi-0.73.ts) with the same two tools.
 */
import type { Content, ImageContent, TextContent, ToolCall } from '../../src/core/tool.ts';
import { nowNs } from './clock.ts';

export interface SpanHooks {
  /** Runs just before the span's clock starts (e.g. start an event-loop watch). */
  before?: () => Promise<unknown> | unknown;
  /** Runs just after the span's clock stops. */
  after?: () => Promise<unknown> | unknown;
}

export interface PiBatch {
  /** The tool step's wall time in ns. */
  ns: number;
  /** The tool results the loop made, in its own message shape. */
  results: unknown[];
}

/** One agent-loop run per batch: what every pi harness offers. */
export interface PiRunner {
  batch(calls: ToolCall[], hooks?: SpanHooks): Promise<PiBatch>;
}

/** The trivial tool (bench/tools/noop.ts) or the CPU-heavy one (tools/hash.ts), as pi tools. */
export type PiTool = 'noop' | 'hash';

export interface PiPeer {
  /** How reports name it, e.g. "@earendil-works/pi-agent-core 1.6.0". */
  readonly name: string;
  harness(tools: readonly PiTool[]): PiRunner;
}

/** `@earendil-works/pi-agent-core` declares engines node >=22.19.0. */
export function newPiRuns(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 19);
}

/** The package of the peer on this Node line. */
export function piPackage(): string {
  return newPiRuns() ? '@earendil-works/pi-agent-core' : '@mariozechner/pi-agent-core';
}

let peer: Promise<PiPeer> | undefined;

/** The pi-agent-core this Node line runs, loaded once. */
export function piPeer(): Promise<PiPeer> {
  return (peer ??= newPiRuns() ? import('./pi-1.ts').then((m) => m.peer) : import('./pi-0.73.ts').then((m) => m.peer));
}

/** The model both versions' scripted runs name (no provider is ever called). */
export const SCRIPTED_MODEL = {
  id: 'scripted',
  name: 'Scripted model',
  api: 'scripted',
  provider: 'scripted',
  baseUrl: '',
  reasoning: false,
  input: ['text' as const],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 1_000_000,
};

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/**
 * A turn of the scripted model, in the assistant-message shape both
 * versions share: the one that asks for `calls`, or the final text.
 */
export function scriptedTurn(calls?: ToolCall[]) {
  const { api, provider, id: model } = SCRIPTED_MODEL;
  const content = calls
    ? calls.map((call) => ({ type: 'toolCall' as const, id: call.id, name: call.name, arguments: call.arguments }))
    : [{ type: 'text' as const, text: 'done' }];
  return {
    role: 'assistant' as const,
    content,
    api,
    provider,
    model,
    usage: NO_USAGE,
    stopReason: calls ? 'toolUse' : 'stop',
    timestamp: Date.now(),
  };
}

/** A stream function for a scripted run: each model turn is `next()`, sent as one `done` event on a stream made by `create`. */
export function scriptedStreamFn<
  Message extends { stopReason: string },
  Stream extends { push(event: ScriptedDone<Message>): void },
>(next: () => Message, create: () => Stream): () => Stream {
  return () => {
    const message = next();
    const stream = create();
    stream.push({ type: 'done', reason: message.stopReason === 'toolUse' ? 'toolUse' : 'stop', message });
    return stream;
  };
}

interface ScriptedDone<Message> {
  type: 'done';
  reason: 'toolUse' | 'stop';
  message: Message;
}

/** The events of a pi agent loop, as far as the span needs them (both versions' events fit). */
interface LoopEvent {
  type: string;
  message?: unknown;
  toolResults?: unknown[];
}

/** What differs between the pi versions in one scripted run: their messages and their loop. */
export interface ScriptedLoop<Message> {
  /** The assistant turn that asks for `calls`, or the final text turn. */
  assistant(calls?: ToolCall[]): Message;
  /** Runs the agent loop once; its stream function answers each model turn with `next()`. */
  run(next: () => Message, emit: (event: LoopEvent) => Promise<void>): Promise<unknown>;
}

/**
 * One agent-loop run that executes `calls` as one batch: the first model
 * turn asks for them, the second answers with text. The span is the loop's
 * tool step, from the `message_end` of the asking turn to the `turn_end`
 * that carries the results.
 */
export async function measureToolStep<Message>(
  loop: ScriptedLoop<Message>,
  calls: ToolCall[],
  hooks: SpanHooks = {},
): Promise<PiBatch> {
  const toolTurn = loop.assistant(calls);
  const finalTurn = loop.assistant();
  let turn = 0;
  let start = 0;
  let end = 0;
  let results: unknown[] = [];
  const emit = async (event: LoopEvent) => {
    if (event.type === 'message_end' && event.message === toolTurn) {
      await hooks.before?.();
      start = nowNs();
    } else if (event.type === 'turn_end' && event.message === toolTurn) {
      end = nowNs();
      results = event.toolResults ?? [];
      await hooks.after?.();
    }
  };
  await loop.run(() => (turn++ === 0 ? toolTurn : finalTurn), emit);
  if (start === 0 || end === 0) throw new Error('pi-agent-core: the scripted run did not execute its tool batch');
  return { ns: end - start, results };
}

/** pi's tool results hold text and image parts only; the hash tool returns text, so nothing is dropped. */
export function piContent(content: Content[]): Array<TextContent | ImageContent> {
  return content.filter((part): part is TextContent | ImageContent => part.type === 'text' || part.type === 'image');
}
