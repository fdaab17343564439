/**
 * Loaded with `--import` into the process tier's child before its entry,
 * when the child runs under permissions. The child needs `--allow-worker`
 * to start its pool, and measured on Node 20-26, a worker started with an
 * explicit `execArgv: []` in such a process has no restrictions at all. So
 * code that got onto the child's main thread could escape through one. This
 * replaces `Worker` in this realm (piscina imports it after this ran) with
 * one that always gives a new worker the child's own permission flags,
 * minus `--allow-worker`: every worker is at least as restricted as the
 * child, and cannot start workers itself.
 */
import workerThreads, { type WorkerOptions } from 'node:worker_threads';
import { syncBuiltinESMExports } from 'node:module';

const Original = workerThreads.Worker;
const permission = process.execArgv.find((flag) => flag === '--permission' || flag === '--experimental-permission');

if (permission) {
  const workerFlags = process.execArgv.filter((flag) => flag !== '--allow-worker' && !flag.startsWith('--import'));
  // A function, not a subclass: `Object.getPrototypeOf` of a subclass would hand out the original.
  const GuardedWorker = function Worker(this: unknown, filename: string | URL, options: WorkerOptions = {}) {
    // Plain: the same TypeError Node's own Worker throws, so the guard is indistinguishable from it.
    if (!new.target) throw new TypeError("Class constructor Worker cannot be invoked without 'new'");
    return Reflect.construct(Original, [filename, { ...options, execArgv: workerFlags }], new.target);
  } as unknown as typeof Original;
  GuardedWorker.prototype = Original.prototype;
  Object.defineProperty(Original.prototype, 'constructor', {
    value: GuardedWorker,
    writable: false,
    configurable: false,
  });
  Object.defineProperty(workerThreads, 'Worker', { value: GuardedWorker, writable: false, configurable: false });
  syncBuiltinESMExports();
}
