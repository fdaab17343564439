/**
 * Child process for case 8: resident memory of a host with N idle workers.
 * Runs one call on every worker (a sleep, so each worker takes one), lets
 * the pool go idle, collects garbage, then reads RSS. Prints one JSON line.
 *
 *   memory.ts toolpool 4    toolpool executor, 4 workers, the noop tool loaded in each
 *   memory.ts raw 4         raw piscina, 4 workers, the same tool loaded in each
 *   memory.ts none 0        nothing started: the host's own baseline
 */
import { toolpool } from '../lib/toolpool.ts';
import { RawPool, TOOLS, calls } from '../lib/fixtures.ts';
import { collectGarbage, sleep } from '../lib/clock.ts';

const kind = process.argv[2] ?? 'toolpool';
const workers = Number(process.argv[3] ?? 1);

async function settledRss(): Promise<number> {
  await sleep(300);
  collectGarbage();
  await sleep(200);
  collectGarbage();
  return process.memoryUsage().rss / 2 ** 20;
}

const { createExecutor } = await toolpool();
const before = await settledRss();
let close = async () => undefined as unknown;
if (kind === 'toolpool') {
  const executor = await createExecutor({ tools: [TOOLS.sleep], workers: { min: workers, max: workers } });
  await executor.executeBatch(calls(workers, 'sleep', { ms: 100 }));
  close = () => executor.close();
} else if (kind === 'raw') {
  const raw = new RawPool(workers);
  const module = await raw.module(TOOLS.sleep);
  await Promise.all(Array.from({ length: workers }, () => raw.run(module, { ms: 100 })));
  close = () => raw.close();
}
const after = await settledRss();
await close();
console.log(JSON.stringify({ kind, workers, beforeMb: before, afterMb: after }));
