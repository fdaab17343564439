import { receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { ToolErrors } from '../../core/errors.ts';
import { parseWorkerMessage } from './channel-messages.ts';
import { HostCallGate, type HostFunctionTable } from './host-functions.ts';
import { answerQuestion } from './questions.ts';
import { VERDICT_AFTER_MS, isOutOfMemory, type PoolCall } from './pool-call.ts';
import type { StartCounter } from './start-counter.ts';
import type { HostCallMessage, HostMessage, ResultMessage } from './protocol.ts';

/**
 * Calls a worker may be sent beyond what it runs at once: they wait in the
 * worker, so it starts the next call without waiting for the host's turn.
 */
export const SEND_AHEAD = 2;

/** How long a closed channel waits for its worker's exit event before the close counts as the tool's doing. */
const PORT_CLOSE_GRACE_MS = 500;

/** How long a terminated thread may take to end before it is abandoned (piscina replaces it; it keeps its thread token). */
const ABANDON_AFTER_MS = 1_000;

/** What a channel needs from its pool. */
export interface ChannelOwner {
  readonly hostFunctions: HostFunctionTable;
  /** The worker took the lease with this id; returns false when the pool offered no such lease. */
  leased(channel: WorkerChannel, leaseId: number): boolean;
  /**
   * A call sent here did not start: it goes to another worker. `failed`
   * when its worker died before starting it (those count against the call:
   * a worker that dies on every start must not bounce it forever); not when
   * the worker was retired or gave it back.
   */
  requeue(call: PoolCall, why: string, failed: boolean): void;
  /** Calls ended on this channel: it may take more, or give its lease back. */
  freed(channel: WorkerChannel): void;
  /** The channel's worker is gone or retired: no call is routed to it again. */
  forget(channel: WorkerChannel): void;
  /** A thread abandoned inside a native call really ended: the thread token it kept goes back. */
  stuckThreadEnded(): void;
}

/**
 * The host's end of one worker's channel, bound to that worker's Worker
 * object when its hello arrived: messages on it speak for that worker and no
 * other. The host sends a worker its calls here, and the worker may only
 * speak for calls it was sent; anything else (junk, a forged result or
 * update, a message for another call, a closed port) retires the worker: its
 * calls get an error saying it broke the protocol, and nothing else is
 * touched.
 */
export class WorkerChannel {
  /** The calls sent to this worker and not yet ended, started or not. */
  readonly calls = new Map<number, PoolCall>();
  /** Tools whose first call here has said its module is loaded. */
  readonly #loadedTools = new Set<string>();
  /** Calls this worker runs now, as the host counts them: each begins when sent with room, or when a call before it ends. */
  #running = 0;
  /** Calls sent ahead that wait in the worker for room, in the order sent (the order the worker starts them). */
  readonly #ahead: PoolCall[] = [];
  /** The lease this worker holds (it runs calls only while it has one). */
  lease: number | undefined;
  /** It runs calls, and holds one of the thread tokens all trust domains share for that (see ThreadBudget). */
  holdsToken = false;
  /** When this worker last had no call. */
  idleSince = Date.now();
  retired: string | undefined;
  #error: unknown;
  /** Exit events seen (Node's own and the one emitted for an abandoned thread): see #errored. */
  #exits = 0;
  #exitCode: { code: number } | undefined;
  /** Its channel closed and no exit followed within the grace: terminated to see whether the thread was still alive. */
  #closedAlive = false;
  /** The call whose stop killed this worker: the calls that shared it are told so. */
  #killedFor: PoolCall | undefined;
  /** Terminated but not ended within a second: abandoned (piscina replaced it), its started calls wait for its end. */
  abandoned = false;
  /** Abandoned and not ended within VERDICT_AFTER_MS either: a thread inside a native call, still running. */
  stillRuns = false;
  /** The abandoned thread's verdict timer, while its started calls wait for its end. */
  #verdict: NodeJS.Timeout | undefined;
  #terminating = false;
  /** An abandoned thread's token, held until the thread really ends. */
  #stuckToken = false;
  #readingQueued = false;
  readonly #hostCalls: HostCallGate;

  constructor(
    readonly worker: Worker,
    readonly port: MessagePort,
    readonly starts: StartCounter,
    private readonly owner: ChannelOwner,
  ) {
    this.#hostCalls = new HostCallGate(owner.hostFunctions, (reply) => port.postMessage({ t: 'host-reply', ...reply }));
    port.on('message', (message: unknown) => this.#receive(message));
    port.on('close', () => this.#closed());
    port.unref();
    worker.on('error', (error) => this.#errored(error));
    worker.on('exit', (code) => this.#exited(code));
  }

  /**
   * The tool of the calls sent here (they are all of one tool), and how
   * many more it may be sent: up to that tool's concurrency, plus `ahead`
   * that wait in the worker and start as soon as room frees there.
   */
  room(ahead: number): { toolKey: string | undefined; free: number } {
    const first = this.calls.values().next().value;
    if (!first) return { toolKey: undefined, free: 1 };
    return { toolKey: first.toolKey, free: first.concurrency + ahead - this.calls.size };
  }

  /** The last call sent ahead here, for another worker that is idle (the worker gives it back if it has not started it). */
  recallOne(): boolean {
    let last: PoolCall | undefined;
    for (const call of this.#ahead) if (!call.recalled && !call.outcome) last = call;
    if (!last) return false;
    last.recalled = true;
    this.post({ t: 'recall', runId: last.runId });
    return true;
  }

  send(call: PoolCall, hostFunctions: string[]): void {
    this.calls.set(call.runId, call);
    call.sent(this, this.starts.next());
    this.post({ t: 'execute', task: call.task(hostFunctions) });
    if (this.#running < call.concurrency) this.#begin(call);
    else this.#ahead.push(call);
  }

  /** Whether the worker says it has started this call (see start-counter.ts). */
  hasStarted(call: PoolCall): boolean {
    return call.seq !== 0 && this.starts.hasStarted(call.seq);
  }

  #begin(call: PoolCall): void {
    this.#running++;
    call.begin(!this.#loadedTools.has(call.toolKey));
  }

  /** A call here ended: the next one sent ahead begins in the worker now. */
  #ended(call: PoolCall): void {
    const ahead = this.#ahead.indexOf(call);
    if (ahead >= 0) this.#ahead.splice(ahead, 1);
    else this.#running--;
    while (this.#ahead.length > 0 && this.#running < this.#ahead[0]!.concurrency) this.#begin(this.#ahead.shift()!);
  }

  post(message: HostMessage): void {
    if (this.retired) return;
    try {
      this.port.postMessage(message);
    } catch {
      // a closed port: the 'close' event retires the worker
    }
  }

  /** Reads what is already queued on the channel, now. */
  drain(): void {
    let entry: { message: unknown } | undefined;
    while (!this.retired && (entry = receiveMessageOnPort(this.port) as { message: unknown } | undefined))
      this.#receive(entry.message);
  }

  /** The hard kill of `call`'s stop: terminate the thread. Its calls end when it exits. */
  kill(call: PoolCall): boolean {
    if (this.calls.get(call.runId) !== call) return false;
    this.#killedFor ??= call;
    this.#terminate();
    return true;
  }

  /**
   * Terminates the thread, and abandons it when it does not end: a thread
   * blocked in native code (a sync sleep, a sync read of stdin) cannot be
   * terminated until that call returns. Abandoned, it stops counting as one
   * of piscina's workers (piscina hears an exit and starts a replacement)
   * and no longer keeps the event loop alive. Node still waits for such a
   * thread when the process exits; the process tier does not have that limit.
   *
   * A thread busy in a long garbage collection cannot be terminated either,
   * and ends on its own (out of memory) once it is done: the verdict on its
   * calls waits for its end, up to VERDICT_AFTER_MS (see #exited).
   */
  #terminate(): void {
    void this.worker.terminate();
    if (this.#terminating) return;
    this.#terminating = true;
    // Only calls it started wait for its verdict: the others go to another worker.
    for (const call of this.calls.values()) if (this.hasStarted(call)) call.terminated();
    setTimeout(() => {
      if (this.#exitCode) return;
      this.abandoned = true;
      // Still running tool code: it keeps its thread token until it really ends (see #exited), so the pool
      // never has more than workers.max threads of tool code at once because of it.
      this.#stuckToken = this.holdsToken;
      this.holdsToken = false;
      this.worker.unref();
      this.#verdict = setTimeout(() => this.#noEnd(), VERDICT_AFTER_MS - ABANDON_AFTER_MS).unref();
      this.worker.emit('exit', 1);
    }, ABANDON_AFTER_MS).unref();
  }

  /** The abandoned thread did not end within the bound: it is inside a native call, and its calls are told it still runs. */
  #noEnd(): void {
    this.#verdict = undefined;
    this.stillRuns = true;
    this.#killedFor?.unstoppable();
    this.#endCalls(1);
  }

  retireIfRunning(call: PoolCall, reason: string): void {
    if (this.calls.get(call.runId) === call) this.retire(reason, false);
  }

  /**
   * Stops routing to this worker and terminates it. After a protocol
   * violation its started calls get an error saying so; after a plain
   * retirement (leftovers, a blocked thread) they are told their worker was
   * retired. Calls it had not started go to another worker. What the worker
   * posted before is read first: a result already on its way counts (the
   * violation may have come on another port, and overtaken it).
   */
  retire(reason: string, violation: boolean): void {
    this.#retire(reason, violation, false);
  }

  /**
   * The watch found this worker blocked without starting the calls it was
   * sent. Like a death before any start, a worker that never started a call
   * (stuck importing a module at startup) counts an attempt against them, so
   * replacements stuck the same way cannot bounce a call forever; one blocked
   * by what its last call left does not.
   */
  retireBlocked(reason: string): void {
    this.#retire(reason, false, !this.starts.anyStarted);
  }

  #retire(reason: string, violation: boolean, countsAgainstUnstarted: boolean): void {
    if (this.retired) return;
    this.#readQueued();
    if (this.retired) return; // what was queued broke the protocol itself
    this.retired = reason;
    this.owner.forget(this);
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const call of calls) {
      if (!this.hasStarted(call))
        this.owner.requeue(call, `its worker was retired (${reason})`, countsAgainstUnstarted);
      else call.fail(violation ? ToolErrors.protocolViolation(reason) : ToolErrors.workerRetired(reason));
    }
    this.#terminate();
    this.port.close();
  }

  #readQueued(): void {
    if (this.#readingQueued) return;
    this.#readingQueued = true;
    try {
      this.drain();
    } finally {
      this.#readingQueued = false;
    }
  }

  #receive(raw: unknown): void {
    if (this.retired) return;
    const message = parseWorkerMessage(raw);
    if (typeof message === 'string') return this.retire(`it sent ${message}`, true);
    switch (message.t) {
      case 'retire':
        return this.retire(message.reason.slice(0, 300), false);
      case 'serving':
        return this.owner.leased(this, message.leaseId)
          ? undefined
          : this.retire('it claimed a lease it was not given', true);
      case 'refused':
        return this.#refused(message.runId);
    }
    const call = this.calls.get(message.runId);
    if (!call) return this.retire(`it sent a ${message.t} for a call it was not sent`, true);
    // The runtime writes the start counter before a call's code runs, and nothing else can reach it: a message for a call it has
    // not started comes from tool code that took the call off the channel itself. The call goes to another worker.
    if (!this.hasStarted(call)) return this.retire(`it sent a ${message.t} for a call it had not started`, true);
    switch (message.t) {
      case 'update': {
        const problem = call.receiveUpdate(message.partial);
        return problem ? this.retire(problem, true) : undefined;
      }
      case 'result':
        return this.#finished(call, message);
      case 'loaded':
        return this.#loaded(call);
      case 'host-call':
        return this.#answerHostCall(call, message);
      case 'elicit':
        return answerQuestion(call, message, (reply) => this.port.postMessage({ t: 'host-reply', ...reply }));
    }
  }

  /** A tool's first call here imported its module: every call of that tool waiting on the import runs from now. */
  #loaded(call: PoolCall): void {
    this.#loadedTools.add(call.toolKey);
    for (const other of this.calls.values()) if (other.toolKey === call.toolKey) other.loaded();
  }

  #finished(call: PoolCall, message: ResultMessage): void {
    this.calls.delete(call.runId);
    this.#ended(call);
    if (this.calls.size === 0) this.idleSince = Date.now();
    const problem = call.finish(message);
    if (problem) return this.retire(problem, true);
    if (message.retire) return this.retire(message.retire, false);
    this.owner.freed(this);
  }

  /** The worker did not start a call sent to it: it was retiring, or the call was aborted or recalled first. */
  #refused(runId: number): void {
    const call = this.calls.get(runId);
    if (!call) return this.retire('it refused a call it was not sent', true);
    // The worker refuses only calls it has not started. One the host never asked back (recall, abort) that the counter says started
    // would run again elsewhere while it still runs here.
    if (!call.recalled && !call.outcome && !call.stopping && this.hasStarted(call))
      return this.retire('it refused a call it had started', true);
    this.calls.delete(runId);
    this.#ended(call);
    call.recalled = false;
    this.owner.requeue(call, 'its worker was retiring', false);
  }

  /** A queued host call whose tool call ended meanwhile is dropped: nothing waits for its answer. */
  #answerHostCall(call: PoolCall, message: HostCallMessage): void {
    this.#hostCalls.submit(message, call.limits.maxResultBytes, () => this.calls.get(call.runId) === call);
  }

  /**
   * The worker's end closes when the thread dies, before its 'exit' event;
   * only a close without an exit is the tool closing the channel. How long
   * the exit takes to follow is the machine's business (a thread tearing
   * down a full heap on a loaded machine took over the grace), so the grace
   * does not decide: after it, the thread is terminated, and its exit says
   * whether it was still alive (terminated: code 1, no error of its own) or
   * was dying of its own cause (an exit code, an error), which its calls
   * are then told.
   */
  #closed(): void {
    setTimeout(() => {
      if (this.#exitCode || this.retired) return;
      this.#closedAlive = true;
      this.#terminate();
    }, PORT_CLOSE_GRACE_MS).unref();
  }

  /**
   * Node raises a thread's real out-of-memory error on the host just before
   * its 'exit', in the same turn. A tool can throw an error with that code
   * itself (its uncaught throw arrives turns earlier, by message): that one
   * would turn its timeout, and its co-runners' cause, into a memory limit.
   * So an out-of-memory error counts only when the exit follows at once.
   */
  #errored(error: unknown): void {
    this.#error = error;
    if (!isOutOfMemory(error)) return;
    const exits = this.#exits;
    queueMicrotask(() => {
      if (this.#exits === exits && this.#error === error)
        this.#error = new Error("the tool threw an error carrying Node's out-of-memory code");
    });
  }

  #exited(code: number): void {
    this.#exits++;
    if (this.#exitCode) {
      // The real exit of a thread abandoned earlier: its token goes back now, and its calls, if they still wait, learn how it ended.
      if (this.#stuckToken) this.owner.stuckThreadEnded();
      this.#stuckToken = false;
      if (this.#verdict) {
        clearTimeout(this.#verdict);
        this.#verdict = undefined;
        this.#endCalls(code);
      }
      return;
    }
    this.#exitCode = { code };
    // Its channel closed and the thread lived on until terminated, and really ended: the tool closed the channel. One that did
    // not end in time (abandoned) may be a thread still tearing down a full heap (slow on a loaded machine): no verdict of breach.
    if (this.#closedAlive && !this.abandoned && code === 1 && this.#error === undefined)
      this.retire('it closed its channel', true);
    this.drain(); // a result posted just before the thread died
    this.retired ??= `it exited with code ${code}`;
    this.owner.forget(this);
    // A worker that had started calls died of one of them (or of what one left behind), not of the calls it had not started: those
    // do not count an attempt. Only a worker that dies before starting any call (at startup, importing a tool) counts against them.
    const startupDeath = !this.starts.anyStarted;
    for (const call of [...this.calls.values()]) {
      if (this.hasStarted(call)) continue;
      this.calls.delete(call.runId);
      this.owner.requeue(call, this.retired, startupDeath);
    }
    // Abandoned (this exit is the one emitted for piscina): the started calls wait for the thread's real end, or the verdict.
    if (!this.#verdict) this.#endCalls(code);
  }

  /** The thread ended (or is judged still running): its started calls are told why. */
  #endCalls(code: number): void {
    const calls = [...this.calls.values()];
    this.calls.clear();
    const killedFor = this.#killedFor;
    for (const call of calls) {
      if (killedFor && call !== killedFor && !isOutOfMemory(this.#error))
        call.fail(ToolErrors.sharedWorkerKilled(killedFor.killedBecause));
      else call.workerDied(this.#error, code, calls.length - 1);
    }
  }
}
