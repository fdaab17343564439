/**
 * Back-to-back worker-tier calls over time (not part of `npm run bench`):
 * blocks of trivial calls through one executor with one worker, printing
 * each block's median and when it ended. On the 2-vCPU VM the per-call time
 * flips between two modes, ~16 µs and ~80 µs, at moments and for hundreds of
 * milliseconds at a time, within one process and with the same code. Raw
 * piscina flips the same way, and under `taskset -c 0` (one vCPU) neither
 * does: the slow mode is the two threads on different vCPUs. Case 1's
 * back-to-back ratio depends on which mode its blocks land in.
 *
 *   node --import tsx bench/profile/call-modes.ts [blocks=40] [calls per block=400] [pause ms between blocks=0]
 */
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';

const [blocks = 40, perBlock = 400, pauseMs = 0] = process.argv.slice(2).map(Number);
const { createExecutor } = await toolpool();
const worker = await createExecutor({ tools: [TOOLS.noop], workers: { min: 1, max: 1 } });
const call = [toolCall('c1', 'noop', { n: 1 })];
const started = performance.now();
const line: string[] = [];
for (let block = 0; block < blocks; block++) {
  const samples = await timeEach(perBlock, () => worker.executeBatch(call));
  line.push(`${summarize(samples).median.toFixed(0)} µs @${(performance.now() - started).toFixed(0)} ms`);
  if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
}
console.log(line.join('\n'));
await worker.close();
