/**
 * What a thread hop costs on this machine (not part of `npm run bench`): a
 * bare worker thread that echoes on a MessagePort, no toolpool, no piscina.
 * The main thread posts a call-sized message and waits for the echo, after
 * a pause of 0 ms (back to back), one event-loop turn, 1 ms or 5 ms, and
 * prints the median time spent inside `postMessage` itself and the median
 * round trip. On the project's 2-vCPU Firecracker VM a quiet machine gave
 * 70-75 µs back to back and 12-21 µs after a pause; pinned to one vCPU
 * (`taskset -c 0`), 9-10 µs back to back: when the two threads sit on
 * different vCPUs, every wake-up crosses between them. Where the kernel
 * puts them changes with the load (under a CI run the modes swapped). Every
 * thread hop of a call pays it: toolpool's worker tier has one, the walls
 * two more, ten trust domains wake ten threads where one shared domain
 * keeps two busy. BENCHMARKS.md has the figures.
 *
 *   node --import tsx bench/profile/wake-cost.ts [posts per row=2000]
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { summarize } from '../lib/stats.ts';

const posts = Number(process.argv[2] ?? 2000);
const { port1, port2 } = new MessageChannel();
const worker = new Worker(
  `const { workerData } = require('node:worker_threads');
   workerData.port.on('message', (message) => workerData.port.postMessage(message.seq));`,
  { eval: true, workerData: { port: port2 }, transferList: [port2] },
);
await new Promise((resolve) => worker.once('online', resolve));

/** About the size of an execute message of a trivial call. */
const message = (seq: number) => ({
  t: 'execute',
  task: {
    module: '/tmp/tools/noop.js',
    codeHash: 'f'.repeat(64),
    runId: 1 + seq,
    seq,
    callId: `c${seq}`,
    args: { n: 1 },
  },
  seq,
});

const pauses: [string, () => Promise<void> | undefined][] = [
  ['back to back', () => undefined],
  ['one event-loop turn', () => new Promise((resolve) => setImmediate(resolve))],
  ['1 ms', () => new Promise((resolve) => setTimeout(resolve, 1))],
  ['5 ms', () => new Promise((resolve) => setTimeout(resolve, 5))],
];

console.log(`Node ${process.version}, ${posts} posts per row; medians`);
for (const [name, pause] of pauses) {
  const inPost: number[] = [];
  const roundTrip: number[] = [];
  for (let seq = 0; seq < posts; seq++) {
    await pause();
    const echoed = new Promise((resolve) => port1.once('message', resolve));
    const start = performance.now();
    port1.postMessage(message(seq));
    const posted = performance.now();
    await echoed;
    inPost.push((posted - start) * 1000);
    roundTrip.push((performance.now() - start) * 1000);
  }
  const post = summarize(inPost).median.toFixed(1);
  const trip = summarize(roundTrip).median.toFixed(1);
  console.log(`${name.padEnd(20)} postMessage ${post.padStart(6)} µs   round trip ${trip.padStart(6)} µs`);
}
port1.close();
await worker.terminate();
