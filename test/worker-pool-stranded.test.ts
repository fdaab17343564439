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
import { ThreadBudget } from '../src/isolation/worker/thread-budget.ts';
import { WorkerPool } from '../src/isolation/worker/worker-pool.ts';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';
import { fixture } from './support/executors.ts';

/** The outcome, or a note that it is still pending after 10 s (its own bounds are longer). */
function within10s<T>(outcome: Promise<T>): Promise<T | string> {
  return Promise.race([
    outcome,
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting after 10 s'), 10_000)),
  ]);
}

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
      const ref = await diesLaterRef();
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
      expect(await within10s(stranded)).toMatchObject({
        ok: false,
        error: expect.stringContaining('dies_later threw on purpose'),
      });
    } finally {
      await pools.close();
    }
  }, 30_000);

  // Not a call but a task that reads the module (prepareArguments here; describe and needsApproval alike). It
  // holds a thread token when it enters piscina's queue; a budget shared with other pools gives it one while
  // this pool's threads are all busy. No lease of the pool waits, so before the fix nothing was asked again
  // and the task waited for its own deadline (20 s + the load bound here).
  test('a prepareArguments waiting in the queue gets a new worker too', async () => {
    const [stranded] = await queuedWhileThreadsDie(2, [{ action: 'throw', ms: 0 }]);
    expect(stranded).toEqual({ action: 'throw', ms: 0 });
  }, 40_000);

  // One thread: the lease asked for the first one starts a thread, which the first one ends too; the second needs another.
  test('two queued prepareArguments, the first ending each new thread: the second still gets one', async () => {
    const [exitsAtOnce, stranded] = await queuedWhileThreadsDie(1, [
      { action: 'exit-in-prepare', ms: 0 },
      { action: 'throw', ms: 0 },
    ]);
    expect(exitsAtOnce).toMatch(/exit|code 1/);
    expect(stranded).toEqual({ action: 'throw', ms: 0 });
  }, 40_000);
});

/**
 * In a pool of `threads` (one or two) sharing a thread budget of four, as a pool shares the budget with other
 * trust domains' pools (so a task that reads a module gets its token while the pool's threads are all busy, and
 * waits in piscina's queue): occupies the threads (a call that exits 400 ms after it started; with two, a
 * prepareArguments that exits after 1.5 s), queues a prepareArguments for each of `queued` once they run, and
 * returns how each ended, or 'still waiting after 10 s'. The call's lease is asked for first (a prepare waits
 * for its token first), so it gets one thread and the prepare the other.
 */
async function queuedWhileThreadsDie(threads: 1 | 2, queued: Record<string, unknown>[]): Promise<unknown[]> {
  const pool = await WorkerPool.start({
    ...PoolSet.defaults(),
    minWorkers: 0,
    maxWorkers: threads,
    budget: new ThreadBudget(4),
    env: {},
    execArgv: [],
    hostFunctions: {},
    maxMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
  });
  try {
    const ref = await diesLaterRef();
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const limits = { ...DEFAULT_LIMITS, timeoutMs: 20_000 };
    const exits = pool.execute(
      { callId: 'exits', args: { action: 'exit', ms: 400 }, limits, onUpdate: () => started() },
      ref,
    );
    const exitsInPrepare =
      threads > 1 ? pool.prepare(ref, { action: 'exit-in-prepare', ms: 1_500 }, 20_000).catch(String) : undefined;
    await running;
    const outcomes = queued.map((raw) => pool.prepare(ref, raw, 20_000).catch(String));
    expect(await exits).toMatchObject({ ok: false, code: 'CRASHED' });
    if (exitsInPrepare) expect(await exitsInPrepare).toMatch(/exit|code 1/);
    return await Promise.all(outcomes.map(within10s));
  } finally {
    await pool.close();
  }
}

async function diesLaterRef() {
  const source = fixture('dies-later.ts');
  return { module: await toRunnableModule(source), source };
}
