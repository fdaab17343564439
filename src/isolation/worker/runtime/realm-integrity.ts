import { EventEmitter } from 'node:events';
import { MessagePort } from 'node:worker_threads';

/**
 * The builtins this runtime and later calls rely on, as they were before any
 * tool code ran. A tool that patches one of them (or adds enumerable
 * properties to Object.prototype) has changed the realm every later call in
 * this worker would share, so the worker is retired after that call.
 */
const watched: Array<[object, PropertyKey]> = [
  [MessagePort.prototype, 'postMessage'],
  [EventEmitter.prototype, 'emit'],
  [Promise.prototype, 'then'],
  [Promise, 'resolve'],
  [Function.prototype, 'call'],
  [Function.prototype, 'apply'],
  [Function.prototype, 'bind'],
  [Object, 'defineProperty'],
  [Object, 'keys'],
  [Array.prototype, 'push'],
  // What the runtime uses to take each call off its queue and find it again: patched, they would hand a later call's task
  // (its arguments, its run id) to the tool that patched them.
  [Array.prototype, 'shift'],
  [Array.prototype, 'splice'],
  [Array.prototype, 'findIndex'],
  [Map.prototype, 'get'],
  [Map.prototype, 'set'],
  [Map.prototype, 'delete'],
  [Set.prototype, 'has'],
  [Set.prototype, 'add'],
  [Atomics, 'store'],
  [JSON, 'stringify'],
  [JSON, 'parse'],
  [process, 'emit'],
  [process, 'exit'],
  [globalThis, 'setTimeout'],
  [globalThis, 'structuredClone'],
];
const read = () => watched.map(([holder, key]) => (holder as Record<PropertyKey, unknown>)[key]);
let original = read();
/**
 * Enumerable properties added to Object.prototype or Array.prototype (the
 * classic pollution, seen by every `for...in` and every lookup of a missing
 * key) are caught with a `for...in` over an empty object and array, which
 * costs next to nothing. Counting every own key of the prototypes and the
 * global object would catch more but cost 10-100 µs per call; a
 * non-enumerable property defined on a prototype, and globals a call adds,
 * therefore stay for later calls in that worker, like module state does.
 */
function pollutedPrototype(): boolean {
  for (const _ in {}) return true;
  for (const _ in []) return true;
  return false;
}
let pollutedAtBaseline = pollutedPrototype();

/**
 * Taken again after a tool module finished importing: what a module does to
 * the realm while it loads (a polyfill, say) is part of that worker from then
 * on; what a call does while it runs is not. The runtime itself holds its
 * own copies of what it needs (see primordials.ts), so a patch made at import
 * cannot reach another call's result or the channel.
 */
export function resetRealmBaseline(): void {
  original = read();
  pollutedAtBaseline = pollutedPrototype();
}

/** Says what a tool changed in the shared realm, or undefined when it is as the runtime left it. */
export function realmChange(): string | undefined {
  for (let i = 0; i < watched.length; i++) {
    const [holder, key] = watched[i]!;
    if ((holder as Record<PropertyKey, unknown>)[key] !== original[i]) return `a builtin was replaced (${String(key)})`;
  }
  if (!pollutedAtBaseline && pollutedPrototype())
    return 'Object.prototype or Array.prototype gained enumerable properties';
  return undefined;
}
