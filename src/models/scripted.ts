/**
 * A deterministic `Model` for tests, demos and benchmarks: it plays a script
 * of turns, streaming text and tool-call arguments in small deltas the way a
 * real model does, and honours the request's abort signal between deltas.
 */
import { errorMessage } from '../core/errors.ts';
import type { AssistantMessage, StopReason, ToolCallContent } from '../core/messages.ts';
import type { Model, ModelRequest, ModelStreamEvent } from '../core/model.ts';
import type { TextContent } from '../core/tool.ts';
import { parseToolArguments } from './shared.ts';
import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';

export interface ScriptedToolCall {
  name: string;
  /** An object, or a JSON string (which may be cut off on purpose, e.g. with `stopReason: 'length'`). */
  arguments?: Record<string, unknown> | string;
  /** Generated when missing: `call_<turn>_<n>`. */
  id?: string;
}

export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Forces how the turn ends: `length` (output cut off by the token limit) or
   * `error` (with `errorMessage`). By default `toolUse` when there are tool
   * calls, else `stop`.
   */
  stopReason?: 'length' | 'error';
  errorMessage?: string;
  /** Pause before each delta, in ms (overrides the model's `delayMs`). */
  delayMs?: number;
}

/** A turn, or a function of the request returning one (so a script can react to tool results). */
export type ScriptStep = ScriptedTurn | ((request: ModelRequest, turn: number) => ScriptedTurn | Promise<ScriptedTurn>);

export interface ScriptedModelOptions {
  /** Default `scripted`. */
  name?: string;
  /** Pause before each delta, in ms (default 0: only a yield to the event loop). */
  delayMs?: number;
}

export interface ScriptedModel extends Model {
  /** Every request received so far, in order (messages copied at the time of the request). */
  readonly requests: ModelRequest[];
  /** Script turns not played yet. */
  readonly remaining: number;
}

/** Characters of tool-call JSON per delta. */
const ARGUMENT_CHUNK = 8;

export function scriptedModel(turns: readonly ScriptStep[], options: ScriptedModelOptions = {}): ScriptedModel {
  if (!Array.isArray(turns))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      'scriptedModel(turns): turns must be an array of turns or functions',
    );
  const script = [...turns];
  const name = options.name ?? 'scripted';
  const requests: ModelRequest[] = [];
  let played = 0;
  return {
    name,
    requests,
    get remaining() {
      return script.length - played;
    },
    stream(request) {
      requests.push({ ...request, messages: [...request.messages], tools: [...request.tools] });
      const turn = ++played;
      return playTurn(script[turn - 1], turn, script.length, request, name, options.delayMs ?? 0);
    },
  };
}

async function* playTurn(
  step: ScriptStep | undefined,
  turn: number,
  scriptLength: number,
  request: ModelRequest,
  model: string,
  defaultDelayMs: number,
): AsyncGenerator<ModelStreamEvent> {
  const stream = new TurnStream(model);
  if (step === undefined) {
    yield stream.done(
      'error',
      `scriptedModel: the script has ${scriptLength} turn(s) and all were played; model call ${turn} has no answer. Add a turn to the script.`,
    );
    return;
  }
  let scripted: ScriptedTurn;
  try {
    scripted = checkTurn(typeof step === 'function' ? await step(request, turn) : step, turn);
  } catch (error) {
    yield stream.done('error', `scriptedModel: turn ${turn}: ${errorMessage(error)}`);
    return;
  }
  const delayMs = scripted.delayMs ?? defaultDelayMs;
  for (const delta of deltasOf(scripted, turn)) {
    await pause(delayMs, request.signal);
    if (request.signal.aborted) {
      yield stream.done('aborted');
      return;
    }
    yield stream.apply(delta);
  }
  if (request.signal.aborted) {
    yield stream.done('aborted');
    return;
  }
  const stopReason: StopReason = scripted.stopReason ?? (scripted.toolCalls?.length ? 'toolUse' : 'stop');
  yield stream.done(
    stopReason,
    stopReason === 'error' ? (scripted.errorMessage ?? 'scriptedModel: scripted error') : undefined,
  );
}

function checkTurn(value: unknown, turn: number): ScriptedTurn {
  if (typeof value !== 'object' || value === null)
    throw new ToolpoolError(
      'TOOLPOOL_ERR_MODEL',
      `expected { text?, toolCalls? }, got ${value === null ? 'null' : typeof value}`,
    );
  const { text, toolCalls } = value as ScriptedTurn;
  if (text !== undefined && typeof text !== 'string')
    throw new ToolpoolError('TOOLPOOL_ERR_MODEL', '"text" must be a string');
  if (toolCalls !== undefined) {
    if (!Array.isArray(toolCalls))
      throw new ToolpoolError('TOOLPOOL_ERR_MODEL', '"toolCalls" must be an array of { name, arguments, id? }');
    toolCalls.forEach((call, index) => {
      if (typeof call?.name !== 'string')
        throw new ToolpoolError('TOOLPOOL_ERR_MODEL', `toolCalls[${index}] needs a string "name" (turn ${turn})`);
    });
  }
  return value as ScriptedTurn;
}

type Delta = Exclude<ModelStreamEvent, { type: 'done' }>;

/** Text in word-sized pieces, then each call: its start, then its argument JSON in small fragments. */
function* deltasOf(turn: ScriptedTurn, turnNumber: number): Generator<Delta> {
  for (const piece of turn.text?.match(/\S+\s*|\s+/g) ?? []) yield { type: 'text_delta', delta: piece };
  const calls = turn.toolCalls ?? [];
  for (const [index, call] of calls.entries()) {
    yield { type: 'toolcall_start', index, id: call.id ?? `call_${turnNumber}_${index + 1}`, name: call.name };
    const json = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
    for (let at = 0; at < json.length; at += ARGUMENT_CHUNK) {
      yield { type: 'toolcall_delta', index, delta: json.slice(at, at + ARGUMENT_CHUNK) };
    }
  }
}

/** What has been streamed of the turn; the final message is built from exactly that. */
class TurnStream {
  #text = '';
  readonly #calls: Array<{ id: string; name: string; json: string }> = [];
  #deltas = 0;

  constructor(private readonly model: string) {}

  apply(delta: Delta): Delta {
    this.#deltas++;
    if (delta.type === 'text_delta') this.#text += delta.delta;
    else if (delta.type === 'toolcall_start') this.#calls[delta.index] = { id: delta.id, name: delta.name, json: '' };
    else this.#calls[delta.index]!.json += delta.delta;
    return delta;
  }

  done(stopReason: StopReason, errorText?: string): ModelStreamEvent {
    const content: Array<TextContent | ToolCallContent> = [];
    if (this.#text) content.push({ type: 'text', text: this.#text });
    for (const call of this.#calls) {
      content.push({ type: 'toolCall', id: call.id, name: call.name, arguments: parseToolArguments(call.json) });
    }
    const message: AssistantMessage = {
      role: 'assistant',
      content,
      stopReason,
      usage: { inputTokens: 0, outputTokens: this.#deltas },
      model: this.model,
      timestamp: Date.now(),
    };
    if (errorText !== undefined) message.errorMessage = errorText;
    return { type: 'done', message };
  }
}

/** Waits `ms` (or one turn of the event loop), waking early on abort. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const wake = () => {
      cancel();
      signal.removeEventListener('abort', wake);
      resolve();
    };
    let cancel: () => void;
    if (ms > 0) {
      const timer = setTimeout(wake, ms);
      cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(wake);
      cancel = () => clearImmediate(immediate);
    }
    signal.addEventListener('abort', wake, { once: true });
  });
}
