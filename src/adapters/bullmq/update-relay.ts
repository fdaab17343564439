import type { Job } from 'bullmq';
import type { ToolResult } from '../../index.ts';
import { PROTOCOL, type CallProgress } from './protocol.ts';

/**
 * Updates of queued calls that may be on their way to Redis at once: every
 * update is delivered while Redis keeps up; past this, intermediate ones are
 * coalesced (latest wins), and the last one always goes before the answer.
 */
const WINDOW = 256;

/**
 * A running call's updates, relayed as its job's progress, in order (one
 * connection keeps the order of its commands), and its heartbeat: when the
 * call said nothing for `heartbeatMs`, a progress that only says it is
 * alive, so the host can tell a quiet call from a lost machine.
 */
export class UpdateRelay {
  #inFlight = 0;
  #pending: ToolResult | undefined;
  #lastSentAt = Date.now();
  #drained: (() => void) | undefined;

  constructor(
    private readonly job: Job,
    private readonly heartbeatMs: number,
  ) {}

  send(update: ToolResult): void {
    if (this.#inFlight >= WINDOW) {
      this.#pending = update;
      return;
    }
    this.#post({ toolpool: PROTOCOL, update });
  }

  /** Called on a timer: a heartbeat when the call has been quiet for its interval. */
  beatIfQuiet(now: number): void {
    if (this.#inFlight === 0 && now - this.#lastSentAt >= this.heartbeatMs)
      this.#post({ toolpool: PROTOCOL, beat: true });
  }

  /** Resolves once every update sent reached Redis (or after `ms`): the answer must not overtake them. */
  drain(ms: number): Promise<void> {
    if (this.#inFlight === 0 && !this.#pending) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#drained = () => (clearTimeout(timer), resolve());
    });
  }

  #post(progress: CallProgress): void {
    this.#inFlight++;
    this.#lastSentAt = Date.now();
    this.job.updateProgress(progress).then(this.#posted, this.#posted);
  }

  readonly #posted = () => {
    this.#inFlight--;
    const pending = this.#pending;
    if (pending) {
      this.#pending = undefined;
      return this.#post({ toolpool: PROTOCOL, update: pending });
    }
    if (this.#inFlight === 0) this.#drained?.();
  };
}
