import { serialize } from 'node:v8';
import { ToolErrors, boundText, errorMessage } from '../../core/errors.ts';
import type { HostFunctions } from '../../core/tool.ts';

/** A host call as it arrived from a worker or a child process: untrusted, already shape-checked. */
export interface HostCallRequest {
  id: number;
  name: string;
  args: unknown[];
}

export type HostCallReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

/** How a reply goes back (a worker's channel, a child's IPC); throws when the value cannot be sent. */
export type SendReply = (reply: HostCallReply) => void;

/**
 * The only way a worker reaches the host's code: "call this listed function
 * with these (structured-cloned) arguments". Unlike comlink's protocol there
 * is no property get, set or construct, no path, and the names are looked up
 * in a null-prototype table built from the host's own enumerable functions,
 * so `constructor`, `__proto__` or `toString` name nothing.
 */
export class HostFunctionTable {
  readonly names: string[];
  readonly #functions: Record<string, (...args: unknown[]) => unknown> = Object.create(null);

  constructor(functions: HostFunctions) {
    for (const name of Object.keys(functions)) {
      const fn = functions[name];
      if (typeof fn === 'function') this.#functions[name] = fn as (...args: unknown[]) => unknown;
    }
    this.names = Object.keys(this.#functions);
  }

  /**
   * Runs the call and sends its reply; never throws. Resolves when the reply
   * is sent, so the caller can bound the calls in flight. The arguments may
   * hold at most `maxArgBytes` (the call's maxResultBytes): a tool cannot
   * hand the host more than it could return.
   */
  answer(request: HostCallRequest, send: SendReply, maxArgBytes: number): Promise<void> {
    const { id, name, args } = request;
    const fn = Object.hasOwn(this.#functions, name) ? this.#functions[name] : undefined;
    if (!fn) return settled(reply(send, { id, ok: false, error: ToolErrors.notAHostFunction(name) }));
    const bytes = argumentBytes(args);
    if (bytes > maxArgBytes)
      return settled(reply(send, { id, ok: false, error: ToolErrors.hostCallTooLarge(name, bytes, maxArgBytes) }));
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(fn(...args));
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (value) => reply(send, { id, ok: true, value }, name),
      // The host's own error text, as a host function in process would reject with it (bounded).
      (error: unknown) => reply(send, { id, ok: false, error: boundText(errorMessage(error)) }),
    );
  }
}

/**
 * Host functions one worker (or child process) may have running on the host
 * at once; more wait in a queue of at most MAX_QUEUED, past which they are
 * refused (the tool sees an error). A tool cannot make the host run its
 * functions without bound.
 */
const MAX_IN_FLIGHT = 64;
const MAX_QUEUED = 4_096;

interface QueuedHostCall {
  request: HostCallRequest;
  maxArgBytes: number;
  /** False once the tool call that made it ended: nothing waits for its answer, so it is dropped. */
  wanted: () => boolean;
}

/** The host calls of one worker or child: answered up to MAX_IN_FLIGHT at once, in arrival order. */
export class HostCallGate {
  #inFlight = 0;
  readonly #queued: QueuedHostCall[] = [];

  constructor(
    private readonly table: HostFunctionTable,
    private readonly send: SendReply,
  ) {}

  submit(request: HostCallRequest, maxArgBytes: number, wanted: () => boolean = () => true): void {
    if (this.#inFlight < MAX_IN_FLIGHT) return this.#run(request, maxArgBytes);
    if (this.#queued.length >= MAX_QUEUED)
      return reply(this.send, { id: request.id, ok: false, error: ToolErrors.hostCallsFlooded(MAX_QUEUED) });
    this.#queued.push({ request, maxArgBytes, wanted });
  }

  #run(request: HostCallRequest, maxArgBytes: number): void {
    this.#inFlight++;
    void this.table.answer(request, this.send, maxArgBytes).then(() => {
      this.#inFlight--;
      this.#runNext();
    });
  }

  #runNext(): void {
    while (this.#queued.length > 0) {
      const next = this.#queued.shift()!;
      if (next.wanted()) return this.#run(next.request, next.maxArgBytes);
    }
  }
}

const settled = (_: void) => Promise.resolve();

/** The arguments' size as they crossed (they arrived structured-cloned, so they serialize). */
function argumentBytes(args: unknown[]): number {
  try {
    return serialize(args).byteLength;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** A reply whose value cannot be sent becomes an error reply instead of an exception on the host. */
function reply(send: SendReply, message: HostCallReply, name?: string): void {
  try {
    send(message);
  } catch (error) {
    try {
      send({
        id: message.id,
        ok: false,
        error: ToolErrors.hostFunctionFailed(name ?? '?', `its result cannot be sent (${errorMessage(error)})`),
      });
    } catch {
      // the channel is closed: the worker is gone
    }
  }
}
