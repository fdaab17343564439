import inspector from 'node:inspector';
import * as inspectorPromises from 'node:inspector/promises';

/**
 * The inspector gives tool code the whole heap of its worker (every port,
 * every closure) and, on Node 20-26, posting on some of the internal ports it
 * reaches crashes the host natively: a segfault no host-side check can catch.
 * Tool workers therefore get no inspector: connecting a session or opening
 * the inspector throws. (The process tier confines what it reaches to the
 * child process.) This guards the tool's own thread only: a nested worker
 * the tool starts has a fresh realm and its own inspector, whose
 * `Session.connectToMainThread()` reaches the host's main thread. The worker
 * tier is no wall (docs/isolation.md); these guards keep a buggy tool from
 * crashing the host, they are not a boundary.
 */
// Plain errors, seen by tool code inside its worker: the host never receives them as toolpool's own.
const refuse = () => {
  throw new Error('toolpool: the inspector is not available to tools');
};

/**
 * Node's raw bindings are reachable from any thread as `process.binding`
 * and `process._linkedBinding`; the inspector binding's
 * `MainThreadConnection` opens a session on the process's main thread (in
 * the worker tier, the host's: every domain's calls, its functions, its
 * files). Under the permission model Node refuses `process.binding`; a
 * worker without permissions gets both replaced before any tool code runs.
 */
// Plain, like refuse above: tool-facing, not an error toolpool throws to its user.
const refuseBinding = () => {
  throw new Error("toolpool: Node's internal bindings are not available to tools");
};

export function disableInspector(): void {
  for (const name of ['binding', '_linkedBinding']) {
    Object.defineProperty(process, name, {
      value: refuseBinding,
      writable: false,
      configurable: false,
      enumerable: false,
    });
  }
  for (const Session of [inspector.Session, inspectorPromises.Session]) {
    Object.defineProperty(Session.prototype, 'connect', { value: refuse, writable: false, configurable: false });
    Object.defineProperty(Session.prototype, 'connectToMainThread', {
      value: refuse,
      writable: false,
      configurable: false,
    });
  }
  Object.defineProperty(inspector, 'open', { value: refuse, writable: false, configurable: false });
}
