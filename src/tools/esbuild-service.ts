import { stop } from 'esbuild';

/**
 * esbuild's async API runs one service process per host process, started
 * on first use and unref'd (it runs no tool code, and does not keep the
 * process alive). It is the host's alone to start and stop: it runs while
 * an executor is open or a compile is in flight, and stops when the last
 * executor closes with no compile in flight. Another executor made
 * afterwards starts it again with its first compile (esbuild starts it on
 * demand).
 */
let holders = 0;
let inFlight = 0;
/** The last holder let go while a compile was in flight: the service stops once that compile ends. */
let stopWanted = false;

/** An executor holds the service from its start until it closes: call the function returned to let go (once). */
export function holdEsbuild(): () => void {
  holders++;
  stopWanted = false;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    holders--;
    if (holders === 0) {
      stopWanted = true;
      stopIfUnused();
    }
  };
}

/** Runs one esbuild call: the service is not stopped under it. */
export async function withEsbuild<T>(work: () => Promise<T>): Promise<T> {
  inFlight++;
  try {
    return await work();
  } finally {
    inFlight--;
    stopIfUnused();
  }
}

function stopIfUnused(): void {
  if (!stopWanted || holders > 0 || inFlight > 0) return;
  stopWanted = false;
  void stop();
}
