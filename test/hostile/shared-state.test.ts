/**
 * Zero trust, worker tier: state shared between the host, workers and calls.
 * Nothing in workerData decides a call's fate any more (deadlines,
 * cancellation and attribution are host-side), and what a call changes in
 * its worker's realm retires that worker, so a later call never sees it.
 */
import { expect, test } from 'vitest';
import { createExecutor } from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';
import { attackSuite, succeeded } from './harness.ts';

attackSuite('shared state', [
  // Not stopped (README): globals a call adds stay for later calls in that worker, like module state; checking every global costs 10-100 µs a call.
  {
    name: 'a global set by one call is still seen by the next call in that worker (not stopped)',
    fixture: 'shared-state.ts',
    target: 'set-global',
    workers: 1,
    expectResult: succeeded('set'),
    followUp: { tool: 'self', args: { target: 'read-global' }, expectResult: succeeded('by the attacker') },
  },
  {
    name: 'Object.prototype polluted in the worker is not seen by the next call',
    fixture: 'shared-state.ts',
    target: 'pollute-prototype',
    workers: 1,
    expectResult: succeeded('polluted'),
    followUp: { tool: 'self', args: { target: 'read-prototype' }, expectResult: succeeded('(clean)') },
  },
  {
    name: 'a patched JSON.stringify does not reach the next call',
    fixture: 'shared-state.ts',
    target: 'patch-json',
    workers: 1,
    expectResult: succeeded('patched'),
    followUp: { tool: 'self', args: { target: 'read-json' }, expectResult: succeeded('{"a":1}') },
  },
  {
    name: 'scribbling over everything in workerData',
    fixture: 'shared-state.ts',
    target: 'scribble-worker-data',
    expectResult: succeeded(/^scribbled \d+$/),
  },
]);

/** Runs the read-environ attack in a fresh process (so the secret is in its environment at start, what /proc/self/environ shows). */
async function readEnvironInChild(options: string): Promise<string> {
  const { spawnSync } = await import('node:child_process');
  const script = `
    const { createExecutor } = await import('./src/index.ts');
    const executor = await createExecutor({ tools: [${JSON.stringify(fixture('hostile/shared-state.ts'))}], ...${options} });
    const batch = await executor.executeBatch([{ id: '1', name: 'shared', arguments: { target: 'read-environ' } }]);
    await executor.close();
    console.log(JSON.stringify(batch.results[0].content[0].text));`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, TOOLPOOL_ENVIRON_SECRET: 'hunter2' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return JSON.parse(child.stdout.trim().split('\n').pop()!) as string;
}

test('/proc/self/environ shows the host environment in the worker tier: not stopped, as the README says', async () => {
  expect(await readEnvironInChild('{}')).toBe('saw the host secret');
}, 90_000);

test('/proc/self/environ is refused in the worker tier with permissions on', async () => {
  expect(await readEnvironInChild(`{ permissions: { fsRead: [process.cwd() + '/test'] } }`)).toMatch(
    /ERR_ACCESS_DENIED|Access to this API has been restricted/,
  );
}, 90_000);

test("scribbling over workerData neither switches off another call's timeout nor cancels calls of other batches", async () => {
  const executor = await createExecutor({
    tools: [fixture('hostile/shared-state.ts'), fixture('probe.ts'), fixture('hostile/busy-loop.ts')],
    workers: { min: 3, max: 3 },
    limits: { timeoutMs: 400, abortGraceMs: 100 },
  });
  try {
    const [attack, other] = await Promise.all([
      executor.executeBatch([call('attack', 'shared', { target: 'scribble-worker-data' }), call('busy', 'busy_loop')]),
      executor.executeBatch([call('innocent', 'probe', { action: 'sleep', ms: 150, tag: 'other batch' })]),
    ]);
    expect(textOf(attack.results[1]!)).toMatch(/timed out after 400 ms/);
    expect(textOf(other.results[0]!)).toBe('slept 150 other batch');
  } finally {
    await executor.close();
  }
});
