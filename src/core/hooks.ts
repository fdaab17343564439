import type { Content, ToolCall, ToolResult } from './tool.ts';

export interface BeforeToolCallContext {
  toolCall: ToolCall;
  /** The validated, coerced arguments the tool would receive. */
  args: Record<string, unknown>;
}

/** Return nothing to let the call run, `{ block }` to turn it into an error result, `{ stop }` to end the run. */
export type BeforeToolCallResult = undefined | { block: true; reason?: string } | { stop: true; reason?: string };

export interface AfterToolCallContext {
  toolCall: ToolCall;
  args: Record<string, unknown>;
  result: ToolResult;
  isError: boolean;
}

/** Fields given here replace the result's; `stop` ends the run after this batch. */
export type AfterToolCallResult =
  | undefined
  | {
      content?: Content[];
      details?: unknown;
      isError?: boolean;
      terminate?: boolean;
      stop?: boolean;
      reason?: string;
    };

export type BeforeToolCallHook = (
  context: BeforeToolCallContext,
) => BeforeToolCallResult | void | Promise<BeforeToolCallResult | void>;
export type AfterToolCallHook = (
  context: AfterToolCallContext,
) => AfterToolCallResult | void | Promise<AfterToolCallResult | void>;

/**
 * Runs hooks one at a time, even across batches that run at the same time
 * on one executor, so a hook never has to be re-entrant.
 */
export class HookQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(hook: () => T | Promise<T>): Promise<T> {
    const result = this.#tail.then(hook);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
