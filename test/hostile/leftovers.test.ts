/**
 * Zero trust, worker tier: what a call leaves behind. A worker whose call
 * left a timer, a handle or a changed realm is retired right after it; a
 * worker blocked after its call returned is retired by the pool's watch; a
 * thread that cannot be terminated is abandoned. A later call never gets an
 * error another call caused.
 */
import { expect, test } from 'vitest';
import { attackSuite, runInChild, succeeded } from './harness.ts';

const later = (args: Record<string, unknown>, text: string) => ({
  tool: 'probe' as const,
  args,
  expectResult: succeeded(text),
});
const returned = succeeded('returned');
const sleepy = later({ action: 'sleep', ms: 300, tag: 'innocent' }, 'slept 300 innocent');

attackSuite('leftovers', [
  {
    name: 'an interval left running',
    fixture: 'leftovers.ts',
    target: 'interval',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'an unref()ed timer that throws later',
    fixture: 'leftovers.ts',
    target: 'unref-timer-throws',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'process.exit() scheduled after return',
    fixture: 'leftovers.ts',
    target: 'exit-later',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'process.exit() after an Atomics.waitAsync left pending (no async resource)',
    fixture: 'leftovers.ts',
    target: 'wait-async-exit-later',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a heap bomb scheduled after return',
    fixture: 'leftovers.ts',
    target: 'heap-bomb-later',
    workers: 1,
    options: { limits: { maxMemoryMb: 64 } },
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'Atomics.wait blocking the thread after return',
    fixture: 'leftovers.ts',
    target: 'atomics-wait-later',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a sync sleep (execSync) blocking the thread after return',
    fixture: 'leftovers.ts',
    target: 'sync-sleep-later',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a busy loop in a microtask after the result was posted',
    fixture: 'leftovers.ts',
    target: 'busy-microtask-after-return',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a busy loop in process.nextTick after return',
    fixture: 'leftovers.ts',
    target: 'busy-tick-after-return',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a server socket left listening',
    fixture: 'leftovers.ts',
    target: 'open-server',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'a promise that never settles is harmless',
    fixture: 'leftovers.ts',
    target: 'pending-promise',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'Promise.prototype.then patched',
    fixture: 'leftovers.ts',
    target: 'patch-promise-then',
    workers: 1,
    expectResult: returned,
    followUp: sleepy,
  },
  {
    name: 'MessagePort.prototype.postMessage patched to rewrite later results',
    fixture: 'leftovers.ts',
    target: 'patch-post-message',
    workers: 1,
    expectResult: returned,
    followUp: later({ action: 'ok', tag: 'unchanged' }, 'ok unchanged'),
  },
]);

test('the process exits by itself after close() when a thread was left blocked in Atomics.wait', async () => {
  const run = await runInChild('leftovers.ts', 'atomics-wait-later');
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ attack: 'returned', next: 'ok served' });
  expect(JSON.parse(run.stdout).closeMs).toBeLessThan(10_000); // ~2 s on a quiet machine; generous for a loaded one
}, 90_000);

test('the process exits by itself after close() when a call left an interval running', async () => {
  const run = await runInChild('leftovers.ts', 'interval');
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ attack: 'returned', next: 'ok served' });
}, 90_000);
