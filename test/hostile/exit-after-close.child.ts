/**
 * Child of runInChild (harness.ts): one attack, one follow-up call, close(),
 * then nothing — the process must exit by itself. Prints what it saw.
 */
import { createExecutor } from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';

const [toolFile, target] = process.argv.slice(2);
const executor = await createExecutor({ tools: [toolFile!, fixture('probe.ts')], workers: { min: 1, max: 1 } });
const attack = await executor.executeBatch([call('attack', executor.definitions[0]!.name, { target })]);
const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'served' })]);
const closing = Date.now();
await executor.close();
console.log(
  JSON.stringify({ attack: textOf(attack.results[0]!), next: textOf(next.results[0]!), closeMs: Date.now() - closing }),
);
