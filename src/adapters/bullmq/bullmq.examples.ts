/**
 * The README's "Across machines" example, type-checked with the rest
 * (test/adapters/readme-examples.test.ts checks the README quotes it and
 * runs it against a redis-server and a `toolpool worker`). Run it from the
 * repository root: `REDIS_URL=redis://... node --import tsx src/adapters/bullmq/bullmq.examples.ts`.
 */
// #region readme
// host.ts, on the agent's machine: only each call's execute leaves it, for a worker machine.
import { createExecutor } from '../../index.ts';
import { remoteRunner } from './index.ts';

const executor = await createExecutor({
  tools: ['./tools/hash.ts', './tools/calculator.ts'], // the same modules the worker machines serve
  isolation: 'process', // the least tier a worker machine may run them in
  limits: { timeoutMs: 10_000 }, // travels with each call; the worker machine stops it there
  remote: remoteRunner({ connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', queue: 'tools' }),
});
const { results } = await executor.executeBatch([{ id: 'c1', name: 'calculator', arguments: { expression: '2 ^ 10' } }]);
console.log(results[0]!.content); // [{ type: 'text', text: '2 ^ 10 = 1024' }]
await executor.close(); // also closes the runner's Redis connections
// #endregion
