import type { Worker } from 'node:worker_threads';

/**
 * One `process.on('worker')` listener for every pool of this process,
 * instead of one per pool: with a pool per trust domain, ten tool modules
 * would otherwise pass Node's ten-listener warning. Each pool is told of
 * every new Worker and keeps its own. The listener is there only while a
 * pool is.
 */
const watchers = new Set<(worker: Worker) => void>();

function announce(worker: Worker): void {
  for (const watcher of watchers) watcher(worker);
}

/** Calls `onWorker` for each Worker this process starts from now on; returns the function that stops it. */
export function watchWorkerBirths(onWorker: (worker: Worker) => void): () => void {
  if (watchers.size === 0) process.on('worker', announce);
  watchers.add(onWorker);
  return () => {
    if (!watchers.delete(onWorker)) return;
    if (watchers.size === 0) process.off('worker', announce);
  };
}
