import { stop } from 'esbuild';

/**
 * esbuild's async API runs one service process per host process, started
 * on first use and unref'd (it runs no tool code, and does not keep the
 * process alive). It is the host's alone to start and stop: it runs while
 * an executor is open or a compile is in flight, and stops a second after
 * the last executor closed with no compile in flight (an executor made
 * within that second, as tests and servers that restart do, keeps it: a
 * new service costs about 100 ms). Another executor made afterwards starts
 * it again with its first compile (esbuild starts it on demand). A compile
 * with no executor open stops it the same way once it is done.
 */
const STOP_AFTER_MS = 1_000;

interface ServiceUse {
  holders: number;
  inFlight: number;
  /** Set while the service is to stop (no executor holds it, no compile is in flight), STOP_AFTER_MS later unless used again. */
  stopTimer: NodeJS.Timeout | undefined;
}

/**
 * One count per process, not per copy of this module: two copies of
 * toolpool in one process (a package and a build of it, two versions)
 * share esbuild's one service, and one copy's stop must not end another's
 * compile under it ("The service was stopped").
 */
const use: ServiceUse = ((globalThis as Record<symbol, ServiceUse | undefined>)[
  Symbol.for('toolpool.esbuild-service')
] ??= { holders: 0, inFlight: 0, stopTimer: undefined });

/** An executor holds the service from its start until it closes: call the function returned to let go (once). */
export function holdEsbuild(): () => void {
  use.holders++;
  clearTimeout(use.stopTimer);
  use.stopTimer = undefined;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    use.holders--;
    stopIfUnused();
  };
}

/**
 * Runs one esbuild call: the service is not stopped under it. A call with
 * no executor open (a child's launch that was under way when the last one
 * closed) may have started the service again: it is stopped after it too.
 */
export async function withEsbuild<T>(work: () => Promise<T>): Promise<T> {
  use.inFlight++;
  try {
    return await work();
  } finally {
    use.inFlight--;
    stopIfUnused();
  }
}

function stopIfUnused(): void {
  if (use.holders > 0 || use.inFlight > 0 || use.stopTimer) return;
  use.stopTimer = setTimeout(() => {
    use.stopTimer = undefined;
    if (use.holders === 0 && use.inFlight === 0) void stop();
  }, STOP_AFTER_MS).unref();
}
