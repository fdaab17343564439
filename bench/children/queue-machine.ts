/**
 * A worker machine for case 16, in a process of its own, serving a queue
 * until SIGTERM. Prints "ready" once it serves.
 *
 *   queue-machine.ts toolpool <redis url> <queue> <concurrency>   serveQueue over the bench tools (noop, updates, cpu_ms)
 *   queue-machine.ts raw <redis url> <queue> <concurrency>        a plain BullMQ worker that answers at once
 */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { TOOLS } from '../lib/fixtures.ts';
import { load, toolpool } from '../lib/toolpool.ts';

type Bullmq = typeof import('../../src/adapters/bullmq/index.ts');

const [kind, url, queue, concurrencyText] = process.argv.slice(2) as [string, string, string, string];
const concurrency = Number(concurrencyText);
let stop: () => Promise<unknown>;
if (kind === 'toolpool') {
  const { createExecutor } = await toolpool();
  const { serveQueue } = await load<Bullmq>('src/adapters/bullmq/index.ts');
  const executor = await createExecutor({
    tools: [TOOLS.noop, TOOLS.updates, TOOLS.cpuMs],
    workers: { min: concurrency, max: concurrency },
  });
  // Warm the pool: the first call of each worker imports the module.
  await executor.executeBatch(
    Array.from({ length: concurrency }, (_, i) => ({ id: `w${i}`, name: 'noop', arguments: { n: i } })),
  );
  const server = serveQueue(executor, { connection: url, queue, concurrency });
  stop = async () => (await server.close(), await executor.close());
} else {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const worker = new Worker(queue, async (job) => ({ n: (job.data as { n: number }).n }), { connection, concurrency });
  worker.on('error', () => undefined);
  await worker.waitUntilReady();
  stop = async () => (await worker.close(), connection.disconnect());
}
process.once('SIGTERM', () => void stop().finally(() => process.exit(0)));
console.log('ready');
