import { ProtocolError } from '@modelcontextprotocol/client';
import { McpErrors, ToolErrors, errorMessage } from '../core/errors.ts';
import type { ResolvedLimits } from '../core/limits.ts';
import type { RunJob, RunOutcome } from '../core/runner.ts';
import { StopTimer, stopError, type StopReason, type Stoppable } from '../core/stop-timer.ts';
import type { PendingCall } from './connection.ts';
import { callOutcome, progressPartial } from './result.ts';
import type { Session } from './session.ts';
import { stopCode } from '../core/error-codes.ts';

/** What a call needs of its server besides the session it runs on. */
export interface CallHooks {
  /** The server answered: its failures in a row are over. */
  answered(): void;
  /** A tool list change the server announced: settled before the call's result is returned. */
  refreshed(): Promise<void> | undefined;
  /** Makes the outcome what the caller gets (adds a note about the sandbox's network). */
  finish?(outcome: RunOutcome): RunOutcome;
  /** A call started (+1) or ended (-1) on the server. */
  busy(change: 1 | -1): void;
}

/** Added to a call's timeout and grace for the SDK's own request timeout, which must never fire first. */
const BACKSTOP_MARGIN_MS = 60_000;

/**
 * One call of an MCP tool, with the stop every toolpool call has. The
 * timeout counts from the moment the request is sent. A timeout or an
 * abort cancels the request (`notifications/cancelled`; MCP gives a
 * cancelled request no answer), then asks the server for a ping: a server
 * that answers within `abortGraceMs` is left running, one that does not is
 * blocked and is killed with everything it started (a remote server's
 * session is dropped). Either way the call's error says which it was.
 */
export class McpCall implements Stoppable {
  readonly limits: ResolvedLimits;
  readonly #startedAt = Date.now();
  readonly #runningSince = performance.now();
  #pending: PendingCall | undefined;
  #stop: { reason: StopReason; decided: Promise<boolean>; decide: (answered: boolean) => void } | undefined;

  constructor(
    private readonly session: Session,
    private readonly hooks: CallHooks,
    private readonly job: RunJob,
    private readonly queuedMs: number,
  ) {
    this.limits = job.limits;
  }

  startedAt(): number {
    return this.#startedAt;
  }

  cancelIfQueued(): boolean {
    return false; // sent already: a call waiting for its server to start is not one of these yet
  }

  /** Step one: cancel the request, and ask whether the server still answers. */
  requestStop(reason: StopReason): void {
    let decide!: (answered: boolean) => void;
    const decided = new Promise<boolean>((resolve) => (decide = resolve));
    this.#stop = { reason, decided, decide };
    this.#pending?.cancel(stopError(reason).message);
    void this.session.connection.ping(this.limits.abortGraceMs).then((answered) => answered && decide(true));
  }

  /** Step two, when the grace period ended: no answer to the ping, so the server is blocked. */
  kill(): void {
    if (!this.#stop) return;
    if (!this.session.closed) this.session.kill('blocked');
    this.#stop.decide(false);
  }

  async run(toolName: string): Promise<RunOutcome> {
    const timer = new StopTimer(this, this.job.signal);
    let outcome: RunOutcome;
    this.hooks.busy(1);
    try {
      outcome = await this.#call(toolName);
    } catch (error) {
      outcome = await this.#ended(error);
    } finally {
      timer.dispose();
      this.#pending?.settled();
      this.hooks.busy(-1);
    }
    outcome.usage = { queuedMs: this.queuedMs, runningMs: performance.now() - this.#runningSince };
    return this.hooks.finish ? this.hooks.finish(outcome) : outcome;
  }

  async #call(toolName: string): Promise<RunOutcome> {
    const { session, job } = this;
    this.#pending = session.connection.callTool(toolName, job.args as Record<string, unknown>, {
      timeoutMs: this.limits.timeoutMs + this.limits.abortGraceMs + BACKSTOP_MARGIN_MS,
      onProgress: (update) => void job.onUpdate(progressPartial(update)),
    });
    const result = await this.#pending.result;
    this.hooks.answered();
    // A tools/list_changed that came before this answer is in effect before the caller sees the result.
    const refreshing = this.hooks.refreshed();
    if (refreshing) await refreshing;
    return callOutcome(session.server, result, this.limits.maxResultBytes);
  }

  /** The request ended without an answer: this call's own stop, the server's refusal, or its end. */
  async #ended(error: unknown): Promise<RunOutcome> {
    if (!this.#stop) return this.#failed(error);
    const answered = await this.#stop.decided;
    // It died by itself while toolpool waited for the ping: that is what the call is told.
    if (!answered && this.session.closed && this.session.endedBy === undefined) return this.#failed(error);
    return this.#stopped(this.#stop.reason, answered);
  }

  #stopped(reason: StopReason, answered: boolean): RunOutcome {
    const what =
      reason === 'timeout' ? `Tool timed out after ${this.limits.timeoutMs} ms (limit timeoutMs)` : 'Tool call aborted';
    return {
      ok: false,
      error: McpErrors.stopped(
        this.session.server,
        what,
        answered,
        this.limits.abortGraceMs,
        this.session.endpoint.killable,
        this.session.connection.modern,
      ),
      code: stopCode(reason),
    };
  }

  /** The request failed without a stop of this call's: the server's refusal, or its end. */
  async #failed(error: unknown): Promise<RunOutcome> {
    const { session } = this;
    if (!session.closed) {
      if (error instanceof ProtocolError) this.hooks.answered(); // a JSON-RPC error is an answer
      return { ok: false, error: McpErrors.callFailed(session.server, errorMessage(error)), code: 'THREW' };
    }
    if (session.endedBy === 'closing') return { ok: false, error: ToolErrors.poolClosed(), code: 'CLOSED' };
    if (session.endedBy === 'blocked')
      return { ok: false, error: McpErrors.killedForOther(session.server), code: 'CRASHED' };
    const { brokenBy } = session.endpoint;
    if (brokenBy !== undefined)
      return {
        ok: false,
        error: McpErrors.brokeProtocol(session.server, brokenBy, session.endpoint.killable),
        code: 'CRASHED',
      };
    const ended = await session.endpoint.ended();
    if (ended === undefined)
      return { ok: false, error: McpErrors.callFailed(session.server, errorMessage(error)), code: 'CRASHED' };
    return {
      ok: false,
      error: McpErrors.exitedDuringCall(session.server, ended, session.endpoint.stderrTail()),
      code: 'CRASHED',
    };
  }
}
