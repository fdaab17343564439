import type { Piscina } from 'piscina';
import { Worker } from 'node:worker_threads';

/**
 * Two host-side handlers that trust what a worker posts, and that tool code
 * can reach (every MessagePort in a worker's heap is reachable, e.g. through
 * the inspector's Runtime.queryObjects):
 *
 * - piscina's reply handler: a `null` on its port throws inside its message
 *   handler on the host (an uncaught exception: the host dies), and a reply
 *   with another task's id is still counted against the worker;
 * - Node's own worker port (stdio, errors): a `null` on it throws in
 *   `Worker[kOnMessage]` on the host, with the same effect (Node 20-26).
 *
 * Both are wrapped so that a malformed message is reported as a violation of
 * the worker that sent it (which retires it) instead of reaching them.
 */
const violations = new WeakMap<Worker, (reason: string) => void>();

/** Who hears that a worker sent something it must not on a port toolpool does not own. */
export function onWorkerViolation(worker: Worker, report: (reason: string) => void): void {
  violations.set(worker, report);
}

function reportViolation(worker: Worker, reason: string): void {
  const report = violations.get(worker);
  if (report) report(reason);
  else void worker.terminate();
}

interface PiscinaWorkerInfo {
  worker: Worker;
  taskInfos: Map<unknown, unknown>;
  onMessage: (message: unknown) => void;
}

/**
 * piscina does not export its per-worker object; it is reached through the
 * handle piscina passes with 'workerCreate', emitted before the worker gets
 * its first task (so before any tool code runs in it).
 */
export function guardPiscinaReplies(piscina: Piscina): void {
  piscina.on('workerCreate', (handle: object) => {
    const info = workerInfoOf(handle);
    if (!info) return;
    const deliver = info.onMessage;
    info.onMessage = (message: unknown) => {
      const taskId = (message as { taskId?: unknown } | null)?.taskId;
      if (typeof message === 'object' && message !== null && info.taskInfos.has(taskId)) return deliver(message);
      reportViolation(info.worker, "it posted a forged reply on piscina's port");
    };
  });
}

function workerInfoOf(handle: object): PiscinaWorkerInfo | undefined {
  for (const key of Object.getOwnPropertySymbols(handle)) {
    const value = (handle as Record<symbol, unknown>)[key] as Partial<PiscinaWorkerInfo> | undefined;
    if (value && typeof value.onMessage === 'function' && value.taskInfos instanceof Map && value.worker)
      return value as PiscinaWorkerInfo;
  }
  return undefined;
}

const GUARDED = Symbol('toolpool.guarded');

/** Node's handler of its internal worker messages, guarded once for the whole process. */
export function guardNodeWorkerMessages(): void {
  const prototype = Worker.prototype as unknown as Record<symbol, unknown>;
  if (prototype[GUARDED]) return;
  const key = Object.getOwnPropertySymbols(prototype).find((symbol) => symbol.description === 'kOnMessage');
  const original = key && (prototype[key] as ((this: Worker, message: unknown) => void) | undefined);
  if (!key || typeof original !== 'function') return;
  prototype[key] = function guardedOnMessage(this: Worker, message: unknown) {
    // Only the shape every line's messages share: an object (the type's encoding differs between Node lines).
    if (typeof message !== 'object' || message === null) {
      return reportViolation(this, "it posted junk on Node's internal worker port");
    }
    try {
      return original.call(this, message);
    } catch {
      return reportViolation(this, "it posted a malformed message on Node's internal worker port");
    }
  };
  prototype[GUARDED] = true;
}
