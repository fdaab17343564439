/**
 * A worker that failed to load a tool module asks again on the next call:
 * a read that failed for a moment (a file not there yet, no descriptor
 * left) must not break that tool on that worker for good. Node keeps a
 * module whose code threw as it is, so asking again never runs it twice.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { DEFAULT_LIMITS } from '../src/core/limits.ts';
import type { RunJob } from '../src/core/runner.ts';
import { PoolSet } from '../src/isolation/worker/pool-set.ts';
import { ThreadBudget } from '../src/isolation/worker/thread-budget.ts';
import { WorkerPool } from '../src/isolation/worker/worker-pool.ts';

const folder = await mkdtemp(join(tmpdir(), 'toolpool-loader-'));
afterAll(() => rm(folder, { recursive: true, force: true }));

const job = (callId: string): RunJob => ({ callId, args: {}, limits: DEFAULT_LIMITS, onUpdate: () => {} });

async function onePool(): Promise<WorkerPool> {
  return WorkerPool.start({
    ...PoolSet.defaults(),
    minWorkers: 1,
    maxWorkers: 1,
    budget: new ThreadBudget(1),
    env: {},
    execArgv: [],
    hostFunctions: {},
    maxMemoryMb: DEFAULT_LIMITS.maxMemoryMb,
  });
}

test('a module missing at the first call and there at the second: the second call runs it', async () => {
  const module = join(folder, 'late.mjs');
  const pool = await onePool();
  try {
    const ref = { module, source: module };
    expect(await pool.execute(job('first'), ref)).toMatchObject({
      ok: false,
      error: expect.stringContaining('late.mjs'),
    });
    await writeFile(
      module,
      `export default { name: 'late', description: 'd', parameters: { type: 'object' }, execute: () => ({ content: [{ type: 'text', text: 'ran ' + (globalThis.evaluations = (globalThis.evaluations ?? 0) + 1) }] }) };`,
    );
    expect(await pool.execute(job('second'), ref)).toMatchObject({
      ok: true,
      result: { content: [{ type: 'text', text: 'ran 1' }] },
    });
  } finally {
    await pool.close();
  }
});

test('a module whose code throws at import fails each call, and its code ran once', async () => {
  const module = join(folder, 'throws.mjs');
  await writeFile(
    module,
    `globalThis.imports = (globalThis.imports ?? 0) + 1; throw new Error('import number ' + globalThis.imports);`,
  );
  const pool = await onePool();
  try {
    const ref = { module, source: module };
    for (const id of ['first', 'second'])
      expect(await pool.execute(job(id), ref)).toMatchObject({
        ok: false,
        error: expect.stringContaining('import number 1'),
      });
  } finally {
    await pool.close();
  }
});
