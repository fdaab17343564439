import { receiveMessageOnPort, type MessagePort, type Worker } from 'node:worker_threads';
import { ToolErrors } from '../errors.ts';
import { parseWorkerMessage } from './channel-messages.ts';
import type { HostFunctionTable } from './host-functions.ts';
import type { PoolCall } from './pool-call.ts';
import type { HostCallMessage, HostMessage } from './protocol.ts';
import { lastFinished } from './worker-watch.ts';

/** How long a closed channel waits for its worker's exit event before the close counts as the tool's doing. */
const PORT_CLOSE_GRACE_MS = 500;

/** How long a terminated thread may take to end before it is abandoned. */
const ABANDON_AFTER_MS = 1_000;

/**
 * Host functions one worker may have running on the host at once; more
 * wait in a queue of at most MAX_HOST_CALLS_QUEUED, past which they are
 * refused (the tool sees an error). A tool cannot make the host run its
 * functions without bound.
 */
const MAX_HOST_CALLS_IN_FLIGHT = 64;
const MAX_HOST_CALLS_QUEUED = 4_096;

function postHostRefusal(port: MessagePort, id: number, error: string): void {
  try {
    port.postMessage({ t: 'host-reply', id, ok: false, error });
  } catch {
    // the port is closed: the worker is gone
  }
}

/** What a channel needs from its pool. */
export interface ChannelOwner {
  readonly hostFunctions: HostFunctionTable;
  /** The call with this run id, handed to piscina and not started by any worker; it is now this channel's. */
  claim(runId: number): PoolCall | undefined;
  /** A retiring worker did not start this call: it goes to another worker. */
  refused(runId: number): void;
  /** The channel's worker is gone or retired: no call is routed to it again. */
  forget(channel: WorkerChannel): void;
}

/**
 * The host's end of one worker's channel, bound to that worker's Worker
 * object when its hello arrived: messages on it speak for that worker and no
 * other. A worker may only speak for the calls it started here; anything
 * else (junk, a forged result or update, a message for another call, a
 * closed port) retires the worker: its own calls get an error saying it broke
 * the protocol, and nothing else is touched.
 */
export class WorkerChannel {
  readonly running = new Map<number, PoolCall>();
  /** When this worker last had no call running. */
  idleSince = Date.now();
  retired: string | undefined;
  #error: unknown;
  #exitCode: { code: number } | undefined;
  #hostCallsInFlight = 0;
  readonly #hostCallsQueued: Array<[PoolCall, HostCallMessage]> = [];

  constructor(
    readonly worker: Worker,
    readonly port: MessagePort,
    private readonly owner: ChannelOwner,
  ) {
    port.on('message', (message: unknown) => this.#receive(message));
    port.on('close', () => this.#closed());
    port.unref();
    worker.on('error', (error) => (this.#error = error));
    worker.on('exit', (code) => this.#exited(code));
  }

  post(message: HostMessage): void {
    if (this.retired) return;
    try {
      this.port.postMessage(message);
    } catch {
      // a closed port: the 'close' event retires the worker
    }
  }

  /** Reads what is already queued on the channel, now (used when piscina reports a task done before its result was read). */
  drain(): void {
    let entry: { message: unknown } | undefined;
    while (!this.retired && (entry = receiveMessageOnPort(this.port) as { message: unknown } | undefined)) this.#receive(entry.message);
  }

  /** The hard kill of a stop: terminate the thread. Its calls end when it exits. */
  kill(): void {
    this.#terminate();
  }

  /**
   * Terminates the thread, and abandons it when it does not end: a thread
   * blocked in native code (a sync sleep, a sync read of stdin) cannot be
   * terminated until that call returns. Abandoned, it stops counting as one
   * of piscina's workers (piscina hears an exit and starts a replacement)
   * and no longer keeps the event loop alive. Node still waits for such a
   * thread when the process exits; the process tier does not have that limit.
   */
  #terminate(): void {
    void this.worker.terminate();
    setTimeout(() => {
      if (this.#exitCode) return;
      this.worker.unref();
      this.worker.emit('exit', 1);
    }, ABANDON_AFTER_MS).unref();
  }

  retireIfRunning(call: PoolCall, reason: string): void {
    if (this.running.get(call.runId) === call) this.retire(reason, false);
  }

  /**
   * Stops routing to this worker and terminates it. After a protocol
   * violation its calls get an error saying so; after a plain retirement
   * (leftovers, a blocked thread) they are told their worker was retired.
   */
  retire(reason: string, violation: boolean): void {
    if (this.retired) return;
    this.retired = reason;
    this.owner.forget(this);
    for (const call of this.running.values()) call.fail(violation ? ToolErrors.protocolViolation(reason) : ToolErrors.workerRetired(reason));
    this.running.clear();
    this.#terminate();
    this.port.close();
  }

  #receive(raw: unknown): void {
    if (this.retired) return;
    const message = parseWorkerMessage(raw);
    if (typeof message === 'string') return this.retire(`it sent ${message}`, true);
    if (message.t === 'retire') return this.retire(message.reason.slice(0, 300), false);
    if (message.t === 'refused') return this.owner.refused(message.runId);
    if (message.t === 'start') {
      const call = this.owner.claim(message.runId);
      if (!call) return this.retire('it started a call it was not given', true);
      this.running.set(call.runId, call);
      return call.start(this, message.loading);
    }
    const call = this.running.get(message.runId);
    if (!call) return this.retire(`it sent a ${message.t} for a call it is not running`, true);
    switch (message.t) {
      case 'update': {
        const problem = call.receiveUpdate(message.partial);
        return problem ? this.retire(problem, true) : undefined;
      }
      case 'result': {
        this.running.delete(call.runId);
        if (this.running.size === 0) this.idleSince = Date.now();
        lastFinished.set(this, call);
        const problem = call.finish(message);
        if (problem) return this.retire(problem, true);
        return message.retire ? this.retire(message.retire, false) : undefined;
      }
      case 'loaded':
        return call.loaded();
      case 'host-call':
        return this.#answerHostCall(call, message);
    }
  }

  #answerHostCall(call: PoolCall, message: HostCallMessage): void {
    if (this.#hostCallsInFlight < MAX_HOST_CALLS_IN_FLIGHT) return this.#runHostCall(call, message);
    if (this.#hostCallsQueued.length >= MAX_HOST_CALLS_QUEUED) {
      return postHostRefusal(this.port, message.id, ToolErrors.hostCallsFlooded(MAX_HOST_CALLS_QUEUED));
    }
    this.#hostCallsQueued.push([call, message]);
  }

  #runHostCall(call: PoolCall, message: HostCallMessage): void {
    this.#hostCallsInFlight++;
    void this.owner.hostFunctions.answer(message, this.port, call.limits.maxResultBytes).then(() => {
      this.#hostCallsInFlight--;
      this.#runNextQueued();
    });
  }

  /** A queued host call whose tool call ended meanwhile is dropped: nothing waits for its answer. */
  #runNextQueued(): void {
    while (this.#hostCallsQueued.length > 0) {
      const [call, message] = this.#hostCallsQueued.shift()!;
      if (this.running.get(call.runId) === call) return this.#runHostCall(call, message);
    }
  }

  /**
   * The worker's end closes when the thread dies, just before its 'exit'
   * event; only a close without an exit is the tool closing the channel.
   */
  #closed(): void {
    setTimeout(() => {
      if (!this.#exitCode) this.retire('it closed its channel', true);
    }, PORT_CLOSE_GRACE_MS).unref();
  }

  #exited(code: number): void {
    if (this.#exitCode) return; // the real exit of a thread abandoned earlier
    this.#exitCode = { code };
    this.drain(); // a start or result posted just before the thread died
    this.retired ??= `it exited with code ${code}`;
    this.owner.forget(this);
    for (const call of this.running.values()) call.workerDied(this.#error, code);
    this.running.clear();
  }
}
