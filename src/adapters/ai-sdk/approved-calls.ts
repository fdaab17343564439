import type { PendingApproval } from '../../index.ts';

/**
 * The tool calls for which the AI SDK asked a person (our `needsApproval`
 * said yes), with the arguments toolpool's gate settled for them. The SDK
 * runs `execute` for such a call only after a `tool-approval-response`
 * approved it, so a call found here when it runs carries that approval
 * into toolpool's gate, and runs with those arguments. Bounded: a call that
 * was denied never runs, and its entry must not stay forever.
 */
export class ApprovedCalls {
  readonly #asked = new Map<string, PendingApproval>();

  constructor(private readonly max = 10_000) {}

  asked(call: PendingApproval): void {
    this.#asked.delete(call.toolCallId);
    this.#asked.set(call.toolCallId, call);
    // A Map iterates in insertion order: the first entry is the oldest.
    if (this.#asked.size > this.max) this.#asked.delete(this.#asked.keys().next().value!);
  }

  /** The call the SDK asked about, if it did; forgets it, as a call runs once. */
  take(toolCallId: string): PendingApproval | undefined {
    const call = this.#asked.get(toolCallId);
    this.#asked.delete(toolCallId);
    return call;
  }
}
