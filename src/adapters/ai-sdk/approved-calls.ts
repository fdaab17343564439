/**
 * The tool calls for which the AI SDK asked a person (our `needsApproval`
 * said yes). The SDK runs `execute` for such a call only after a
 * `tool-approval-response` approved it, so a call found here when it runs
 * carries that approval into toolpool's gate. Bounded: a call that was
 * denied never runs, and its id must not stay forever.
 */
export class ApprovedCalls {
  readonly #asked = new Set<string>();

  constructor(private readonly max = 10_000) {}

  asked(toolCallId: string): void {
    this.#asked.delete(toolCallId);
    this.#asked.add(toolCallId);
    // A Set iterates in insertion order: the first id is the oldest.
    if (this.#asked.size > this.max) this.#asked.delete(this.#asked.values().next().value!);
  }

  /** Whether the SDK asked about this call; forgets it, as a call runs once. */
  take(toolCallId: string): boolean {
    return this.#asked.delete(toolCallId);
  }
}
