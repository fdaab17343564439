import type { PendingApproval } from '../executor/approval.ts';
import type { ToolEvent } from '../core/events.ts';
import type { AssistantMessage, Message } from '../core/messages.ts';
import type { ModelStreamEvent } from '../core/model.ts';
import type { ToolResultMessage } from '../core/tool.ts';

/** A streamed piece of an assistant message: every model stream event except the final `done`. */
export type ModelDelta = Exclude<ModelStreamEvent, { type: 'done' }>;

/** Why a run ended, as `agent_end` reports it. */
export type AgentEndReason =
  /** The model answered without calling tools. */
  | 'stop'
  /** Every result of the last batch asked to terminate. */
  | 'terminate'
  /** A `beforeToolCall`/`afterToolCall` hook stopped the run. */
  | 'hookStop'
  /** `agent.abort()` was called. */
  | 'aborted'
  /** The run reached `maxTurns`. */
  | 'maxTurns'
  /** The model's answer was cut off by its output limit, with no tool calls to retry. */
  | 'length'
  /** The model turn failed (its `errorMessage` is in the transcript) or the executor failed. */
  | 'error'
  /** A tool call needs a person's approval: no call of the batch ran; see `pending` and `agent.resume()`. */
  | 'approval';

export interface AgentStartEvent {
  type: 'agent_start';
}

export interface TurnStartEvent {
  type: 'turn_start';
  /** 1 for the first model turn of the run. */
  turn: number;
}

/**
 * A message enters the transcript. For an assistant message it is sent before
 * the model streams, with empty content; `message_end` carries the final one.
 */
export interface MessageStartEvent {
  type: 'message_start';
  message: Message;
}

/**
 * One streamed delta of the assistant message. `message` is a snapshot of the
 * message so far: tool-call arguments are the JSON text received so far, and
 * `stopReason` is provisional until `message_end`.
 */
export interface MessageUpdateEvent {
  type: 'message_update';
  message: AssistantMessage;
  delta: ModelDelta;
}

export interface MessageEndEvent {
  type: 'message_end';
  message: Message;
}

export interface TurnEndEvent {
  type: 'turn_end';
  turn: number;
  message: AssistantMessage;
  /**
   * One result per tool call of `message`, in the order the model asked for
   * them; empty when the batch paused for approval (the results come in the
   * run `resume()` starts, whose first turn carries the same `message`).
   */
  toolResults: ToolResultMessage[];
}

export interface AgentEndEvent {
  type: 'agent_end';
  /** The messages this run added to the transcript (what `prompt()` resolves to). */
  messages: Message[];
  reason: AgentEndReason;
  /** With `reason: 'error'`: the model's or the executor's error message. */
  error?: string;
  /** With `reason: 'hookStop'`: the reason the hook gave, if any. */
  hookStopReason?: string;
  /** With `reason: 'approval'`: the calls that wait for a person, in source order. */
  pending?: PendingApproval[];
  /** Model turns this run took (a resumed batch counts as the run's first turn). */
  turns: number;
}

export type AgentEvent =
  | AgentStartEvent
  | TurnStartEvent
  | MessageStartEvent
  | MessageUpdateEvent
  | MessageEndEvent
  | ToolEvent
  | TurnEndEvent
  | AgentEndEvent;
