import { serialize } from 'node:v8';
import type { MessagePort } from 'node:worker_threads';
import { ToolErrors, boundText, errorMessage } from '../errors.ts';
import type { HostFunctions } from '../tool.ts';
import type { HostCallMessage, HostReplyMessage } from './protocol.ts';

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
   * Runs the call and posts its reply on `port`; never throws. Resolves when
   * the reply is posted, so the caller can bound the calls in flight. The
   * arguments may hold at most `maxArgBytes` (the call's maxResultBytes):
   * a tool cannot hand the host more than it could return.
   */
  answer(message: HostCallMessage, port: MessagePort, maxArgBytes: number): Promise<void> {
    const fn = Object.hasOwn(this.#functions, message.name) ? this.#functions[message.name] : undefined;
    if (!fn) return settled(reply(port, { t: 'host-reply', id: message.id, ok: false, error: ToolErrors.notAHostFunction(message.name) }));
    const bytes = argumentBytes(message.args);
    if (bytes > maxArgBytes) {
      return settled(reply(port, { t: 'host-reply', id: message.id, ok: false, error: ToolErrors.hostCallTooLarge(message.name, bytes, maxArgBytes) }));
    }
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(fn(...message.args));
    } catch (error) {
      pending = Promise.reject(error);
    }
    return pending.then(
      (value) => reply(port, { t: 'host-reply', id: message.id, ok: true, value }, message.name),
      // The host's own error text, as a host function in process would reject with it (bounded).
      (error: unknown) => reply(port, { t: 'host-reply', id: message.id, ok: false, error: boundText(errorMessage(error)) }),
    );
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

/** A reply whose value cannot be cloned becomes an error reply instead of an exception on the host. */
function reply(port: MessagePort, message: HostReplyMessage, name?: string): void {
  try {
    port.postMessage(message);
  } catch (error) {
    try {
      port.postMessage({ t: 'host-reply', id: message.id, ok: false, error: ToolErrors.hostFunctionFailed(name ?? '?', `its result cannot be sent to the worker (${errorMessage(error)})`) });
    } catch {
      // the port is closed: the worker is gone
    }
  }
}
