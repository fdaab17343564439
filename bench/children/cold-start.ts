/**
 * Child process for case 7: `createExecutor` with three tool modules (JS or
 * TS) to the first result, in a fresh process. toolpool itself is imported
 * before the clock starts; what is timed is what an app pays at startup on
 * top of its own imports. Prints one JSON line.
 */
import { fileURLToPath } from 'node:url';
import { toolpool } from '../lib/toolpool.ts';

const kind = process.argv[2] === 'ts' ? 'ts' : 'js';
const tools = ['echo', 'sum', 'upper'].map((name) =>
  fileURLToPath(new URL(`../tools/cold/${name}.${kind === 'ts' ? 'ts' : 'mjs'}`, import.meta.url)),
);
const { createExecutor } = await toolpool();
const start = performance.now();
const executor = await createExecutor({ tools, workers: { min: 1, max: 2 } });
const created = performance.now();
const batch = await executor.executeBatch([{ id: 'first', name: 'echo', arguments: { text: 'hi' } }]);
const first = performance.now();
if (batch.results[0]!.isError)
  throw new Error(`cold start: the first call failed: ${JSON.stringify(batch.results[0])}`);
await executor.close();
console.log(JSON.stringify({ kind, createMs: created - start, firstResultMs: first - start }));
