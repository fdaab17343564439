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

  /** Runs the call and posts its reply on `port`; never throws. */
  answer(message: HostCallMessage, port: MessagePort): void {
    const fn = Object.hasOwn(this.#functions, message.name) ? this.#functions[message.name] : undefined;
    if (!fn) return reply(port, { t: 'host-reply', id: message.id, ok: false, error: ToolErrors.notAHostFunction(message.name) });
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(fn(...message.args));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (value) => reply(port, { t: 'host-reply', id: message.id, ok: true, value }, message.name),
      // The host's own error text, as a host function in process would reject with it (bounded).
      (error: unknown) => reply(port, { t: 'host-reply', id: message.id, ok: false, error: boundText(errorMessage(error)) }),
    );
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
