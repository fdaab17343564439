import type { ElicitRequest, ElicitResult } from './elicitation.ts';
import type { ToolContext, ToolResult } from './tool.ts';

/** What a running call (inline or in a worker) gives its context. */
export interface ContextOwner {
  /** The call's AbortSignal, made on first use: most calls never look at it. */
  signal(): AbortSignal;
  update(partial: ToolResult): void;
  /** The tool's question, relayed to the host's answer (see RunJob.elicit). */
  elicit(request: ElicitRequest): Promise<ElicitResult>;
}

/**
 * The `ctx` a tool receives. A class, so the lazy `signal` getter lives on
 * the prototype: an object literal with a getter costs microseconds per
 * call, and creating an AbortController per call costs more than the rest
 * of a trivial call.
 */
export class CallContext implements ToolContext {
  readonly onUpdate: (partial: ToolResult) => void;
  readonly #owner: ContextOwner;

  constructor(
    owner: ContextOwner,
    readonly callId: string,
    readonly host: ToolContext['host'],
    readonly runId: string | undefined = undefined,
  ) {
    this.#owner = owner;
    this.onUpdate = (partial) => owner.update(partial);
  }

  get signal(): AbortSignal {
    return this.#owner.signal();
  }

  elicit(request: ElicitRequest): Promise<ElicitResult> {
    return this.#owner.elicit(request);
  }
}
