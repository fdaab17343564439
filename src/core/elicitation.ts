/**
 * A tool asking the person mid-call (`ctx.elicit`), in MCP's own shapes
 * (elicitation in form mode): a message and a flat object schema of
 * primitives and enums; the answer is accept (with the form's content),
 * decline or cancel.
 */
import { ToolpoolError } from './error-codes.ts';

/** A field of an elicitation form: a string, number, integer, boolean, or a single- or multi-select enum (MCP's `PrimitiveSchemaDefinition`). */
export type ElicitField = {
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  title?: string;
  description?: string;
  default?: unknown;
  [keyword: string]: unknown;
};

/** What a tool asks: a message for the person and the form to fill in. */
export interface ElicitRequest {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<string, ElicitField>;
    required?: string[];
    [keyword: string]: unknown;
  };
}

/** The person's answer: `content` only with `accept`, checked against the requested schema. */
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
}

/** Who is asking, for a handler: the tool, its call, and a signal that fires when the call stops or ends. */
export interface ElicitContext {
  toolName: string;
  callId: string;
  signal: AbortSignal;
}

/** Answers a tool's question (`createExecutor({ onElicit })`, `new Agent({ onElicit })`, `executeBatch(calls, { onElicit })`). */
export type ElicitHandler = (request: ElicitRequest, context: ElicitContext) => Promise<ElicitResult> | ElicitResult;

/**
 * The host side of one call's `ctx.elicit`, handed to the call's runner:
 * every tier relays the tool's request (untrusted, unchecked) to it, with a
 * signal that fires when the call is stopped or ends.
 */
export type CallElicit = (request: unknown, signal?: AbortSignal) => Promise<ElicitResult>;

/**
 * An elicit error as it crossed a channel (a worker's, a child's) as text
 * and code: a ToolpoolError again when the code is the elicitation one
 * (the only code a reply may carry), a plain Error otherwise.
 */
export function elicitReplyError(message: string, code: unknown): Error {
  return code === 'TOOLPOOL_ERR_ELICITATION' ? new ToolpoolError(code, message) : new Error(message);
}

/** Where no host answer was wired (a runner used without an executor): no one can answer. */
export function noOneToAsk(): Promise<never> {
  return Promise.reject(
    new ToolpoolError(
      'TOOLPOOL_ERR_ELICITATION',
      'The tool asked the person a question (ctx.elicit), but no one can answer it here: pass createExecutor({ onElicit }).',
    ),
  );
}

/** The code an error carries across a channel: only the elicitation one. */
export function elicitErrorCode(error: unknown): 'TOOLPOOL_ERR_ELICITATION' | undefined {
  try {
    return (error as { code?: unknown } | null)?.code === 'TOOLPOOL_ERR_ELICITATION'
      ? 'TOOLPOOL_ERR_ELICITATION'
      : undefined;
  } catch {
    return undefined;
  }
}
