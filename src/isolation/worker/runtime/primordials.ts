import { MessagePort } from 'node:worker_threads';

/**
 * The worker runtime's own references to the builtins it uses on the call
 * path, taken before any tool code runs: a tool that replaces
 * `MessagePort.prototype.postMessage` or `Promise.prototype.then` cannot
 * rewrite what the runtime sends or see it.
 */
const { call } = Function.prototype;
const uncurry = <A extends unknown[], R>(fn: (...args: A) => R) =>
  call.bind(fn) as unknown as (self: unknown, ...args: A) => R;

export const postOnPort = uncurry(MessagePort.prototype.postMessage) as (port: MessagePort, message: unknown) => void;
export const promiseThen = uncurry(Promise.prototype.then) as <T>(
  promise: Promise<T>,
  onFulfilled: (value: T) => unknown,
  onRejected: (error: unknown) => unknown,
) => Promise<unknown>;
export const isPromise = (value: unknown): value is Promise<unknown> => value instanceof Promise;
