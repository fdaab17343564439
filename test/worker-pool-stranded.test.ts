/**
 * piscina starts a worker for a queued task only when a task is submitted
 * (or to keep `minThreads`): when every thread it has dies while a task
 * waits in its queue, that task waits for the next submission. The pool's
 * lease for a waiting call is such a task. Seen as a sandbox call that its
 * child never answered (a fault soak, Node 24: "did not answer the execute
 * request within 50500 ms"); in the worker tier the call would never end.
 */
import { describe, expect, test } from 'vitest';
import { DEFAULT_LIMITS } from '../src/core/limits.ts';
import type { RunJob } from '../src/core/runner.ts';
import { PoolSet } from '../src/isolation/worker/pool-set.ts';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';
import { fixture } from './support/executors.ts';

describe('a call waiting for a worker when every worker of the pool dies', () => {
  test('gets a new worker and its own outcome', async () => {
    const pools = new PoolSet({
      ...PoolSet.defaults(),
      minWorkers: 0,
      maxWorkers: 2,
      env: {},
      execArgv: [],
      hostFunctions: {},
      defaultMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
    });
    try {
      const source = fixture('dies-later.ts');
      const ref = { module: await toRunnableModule(source), source };
      const limits = { ...DEFAULT_LIMITS, timeoutMs: 5_000 };
      const job = (callId: string, args: Record<string, unknown>): RunJob => ({
        callId,
        args,
        limits,
        onUpdate: () => {},
      });
      // Both threads busy: one with a prepare (a task of its own, no lease), one leased to a call.
      const prepare = pools.prepare(ref, { action: 'exit-in-prepare', ms: 600 }, limits).then(
        () => 'prepared',
        (error: unknown) => String(error),
      );
      const exits = pools.execute(job('exits', { action: 'exit', ms: 400 }), ref);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Its lease waits in piscina's queue; then both threads exit.
      const stranded = pools.execute(job('stranded', { action: 'throw', ms: 0 }), ref);
      expect(await exits).toMatchObject({ ok: false, code: 'CRASHED' });
      expect(await prepare).toMatch(/exit|code 1/);
      const outcome = await Promise.race([
        stranded,
        new Promise((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000)),
      ]);
      expect(outcome).toMatchObject({ ok: false, error: expect.stringContaining('dies_later threw on purpose') });
    } finally {
      await pools.close();
    }
  }, 30_000);
});
