import { createHook, type AsyncLocalStorage } from 'node:async_hooks';

/**
 * What a call leaves behind: every async resource (timer, immediate, socket,
 * file request, child process...) created while the call's code ran, that is
 * still alive when the call returns. A worker whose call left something
 * behind is retired right after that call, so a late `process.exit()`, a
 * heap bomb in a timer or a thread blocked by an interval can never hit a
 * later, innocent call. Promises are not tracked (a promise that never
 * settles harms nobody; one that settles later needs a resource that is
 * tracked), nor ticks and microtasks (they run before the worker can take
 * another call; one that blocks the thread is caught by the host, which sees
 * the worker never finish the task).
 */
export interface ResourceOwner {
  leftovers: Set<number>;
  /** `Atomics.waitAsync` waits the call started that have not ended: they are no async resource. */
  pendingWaits: number;
}

const UNTRACKED = new Set(['PROMISE', 'TickObject', 'Microtask']);
/** Timers and immediates say themselves whether they are done, before their destroy hook runs (it runs later, batched). */
type TimerLike = { _destroyed?: boolean };
const resources = new Map<number, { owner: ResourceOwner; resource: TimerLike }>();

export function trackLeftovers(current: AsyncLocalStorage<ResourceOwner>): void {
  createHook({
    init(asyncId, type, _trigger, resource) {
      if (UNTRACKED.has(type)) return;
      const owner = current.getStore();
      if (!owner) return;
      owner.leftovers.add(asyncId);
      resources.set(asyncId, { owner, resource: resource as TimerLike });
    },
    destroy(asyncId) {
      const entry = resources.get(asyncId);
      if (!entry) return;
      entry.owner.leftovers.delete(asyncId);
      resources.delete(asyncId);
    },
    // Node 24+: no promise hook at all (older lines ignore the option; promises return early above).
    trackPromises: false,
  } as Parameters<typeof createHook>[0]).enable();
}

/**
 * `Atomics.waitAsync` resolves a promise later without any async resource
 * (`Atomics.waitAsync(...).value.then(() => process.exit())` left behind
 * would hit the next call), so the runtime wraps it before any tool code
 * runs and counts the waits each call still has open.
 */
export function trackAtomicWaits(current: AsyncLocalStorage<ResourceOwner>): void {
  // Not in the ES2022 lib this project compiles against; Node has it since 16.
  const atomics = Atomics as unknown as Record<
    'waitAsync',
    ((...args: unknown[]) => { async: boolean; value: unknown }) | undefined
  >;
  const waitAsync = atomics.waitAsync;
  if (typeof waitAsync !== 'function') return;
  const then = Promise.prototype.then;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const outcome = Reflect.apply(waitAsync, Atomics, args);
    const owner = current.getStore();
    if (owner && outcome.async) {
      owner.pendingWaits++;
      const done = () => void owner.pendingWaits--;
      Reflect.apply(then, outcome.value, [done, done]);
    }
    return outcome;
  };
  Object.defineProperty(Atomics, 'waitAsync', {
    value: wrapped,
    writable: true,
    configurable: true,
    enumerable: false,
  });
}

/**
 * What the owner left alive: `certain` counts timers and immediates that
 * have not fired or been cleared; `uncertain` counts other resources whose
 * destroy hook has not run yet (it runs batched, a turn later, so a file
 * request that just completed still shows here).
 */
export function liveLeftovers(owner: ResourceOwner): { certain: number; uncertain: number } {
  let certain = owner.pendingWaits;
  let uncertain = 0;
  for (const asyncId of owner.leftovers) {
    const destroyed = resources.get(asyncId)?.resource._destroyed;
    if (destroyed === true) continue;
    if (destroyed === false) certain++;
    else uncertain++;
  }
  return { certain, uncertain };
}
