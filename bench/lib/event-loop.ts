import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sleep } from './clock.ts';

export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
  /** How many timer ticks were recorded: a blocked loop records few. */
  count: number;
}

export interface LoopWatch {
  /** Lets the loop turn once more (so a delay that just ended is recorded), then reads the histogram. */
  stop(): Promise<LoopDelay>;
}

/**
 * Event-loop delay over a span, as Node's `monitorEventLoopDelay` histogram
 * records it: the time between two ticks of a 1 ms timer (so an idle loop
 * reads a little over 1 ms). Start it right before the
 * work and stop it right after. A loop blocked for the whole span records
 * one huge sample when it is free again, which is why `stop` waits a tick.
 * The histogram measures from one tick to the next, so a block that starts
 * before its first tick would go unseen: `watchEventLoop` resolves only once
 * the timer has ticked.
 */
export async function watchEventLoop(): Promise<LoopWatch> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  // No reset after this: a reset also forgets the last tick.
  await sleep(3);
  return {
    async stop() {
      await sleep(3);
      histogram.disable();
      return { p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6, count: histogram.count };
    },
  };
}
