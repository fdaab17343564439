import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Nanoseconds on the process-wide monotonic clock (the same clock in every thread). */
export function nowNs(): number {
  return Number(process.hrtime.bigint());
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let gcFunction: (() => void) | undefined | null = null;

/**
 * A full GC between measurement blocks, so garbage made by one variant is
 * not collected on the time of the next one. `npm run bench` does not pass
 * --expose-gc, so the flag is set at run time (a documented V8 trick).
 */
export function collectGarbage(): void {
  if (gcFunction === null) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (exposed) gcFunction = exposed;
    else {
      try {
        setFlagsFromString('--expose-gc');
        gcFunction = runInNewContext('gc') as () => void;
      } catch {
        gcFunction = undefined;
      }
    }
  }
  gcFunction?.();
}
