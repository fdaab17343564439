/**
 * Zero trust, worker tier: every wait has a bound. A call queued behind a
 * stuck or still-importing worker still ends, prepareArguments honours
 * abort, close() ends in bounded time, and the process then exits by itself.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';
import { runInChild } from './harness.ts';

const open = useExecutors();
const flag = join(tmpdir(), 'toolpool-import-hang.flag');
afterEach(() => rmSync(flag, { force: true }));

test('a call queued behind a worker blocked in native code after return is served by another worker', async () => {
  const executor = await open({
    tools: [fixture('hostile/hangs.ts'), fixture('probe.ts')],
    workers: { min: 1, max: 1 },
  });
  const first = await executor.executeBatch([call('block', 'hang', { target: 'native-block-after-return' })]);
  expect(textOf(first.results[0]!)).toBe('returned');
  const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'served' })]);
  expect(textOf(next.results[0]!)).toBe('ok served');
});

test('a call sent to a worker stuck importing its module ends at the load bound, and the pool recovers', async () => {
  const executor = await open({
    tools: [fixture('hostile/import-hangs-when-flagged.mjs'), fixture('probe.ts')],
    workers: { min: 1, max: 1, loadTimeoutMs: 10_000 },
    limits: { timeoutMs: 500, abortGraceMs: 100 },
  });
  writeFileSync(flag, 'hang');
  // The crash makes piscina start a replacement, which gets stuck importing the module.
  await executor.executeBatch([call('crash', 'import_sometimes_hangs', {})]);
  const stuck = await executor.executeBatch([call('stuck', 'import_sometimes_hangs', {})]);
  expect(stuck.results[0]!.isError).toBe(true);
  // Whether its task reached the stuck worker (load bound, then timeout) or waited behind it (the pool's watch retires it).
  expect(textOf(stuck.results[0]!)).toMatch(/timed out after 500 ms|no worker could start the call/);
  rmSync(flag, { force: true });
  const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'recovered' })]);
  expect(textOf(next.results[0]!)).toBe('ok recovered');
}, 90_000);

test('prepareArguments that never returns ends as soon as the batch is aborted', async () => {
  const executor = await open({ tools: [fixture('slow-prepare.ts')], limits: { timeoutMs: 20_000 } });
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 200);
  const started = Date.now();
  const { results } = await executor.executeBatch([call('1', 'slow_prepare', {})], { signal: abort.signal });
  expect(textOf(results[0]!)).toMatch(/aborted before it started/);
  expect(Date.now() - started).toBeLessThan(10_000); // far below its 20 s prepare bound
});

test('close() while a tool ignores its signal ends the call and returns', async () => {
  const executor = await open({ tools: [fixture('hostile/hangs.ts')] });
  const batch = executor.executeBatch([call('1', 'hang', { target: 'ignore-signal' })]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await executor.close();
  expect(textOf((await batch).results[0]!)).toMatch(/executor was closed/);
});

test('a timeout ends a tool that ignores its signal and one that honours it, each with its own text', async () => {
  // A grace a loaded machine cannot outrun: with 100 ms, the honouring tool's worker once got no CPU in time and
  // was told it ignored its signal (Node 22, a CPU burner beside the suite).
  const executor = await open({
    tools: [fixture('hostile/hangs.ts')],
    limits: { timeoutMs: 300, abortGraceMs: 3_000 },
  });
  const { results } = await executor.executeBatch([
    call('1', 'hang', { target: 'ignore-signal' }),
    call('2', 'hang', { target: 'honour-signal' }),
  ]);
  expect(textOf(results[0]!)).toMatch(/timed out after 300 ms .*killed after the grace period/);
  expect(textOf(results[1]!)).toMatch(/timed out after 300 ms .*stopped when its signal fired/);
});

test('close() is bounded and the process exits by itself when a thread is blocked in native code', async () => {
  const run = await runInChild('hangs.ts', 'native-block-after-return');
  expect(run.code).toBe(0);
  const seen = JSON.parse(run.stdout) as { attack: string; next: string; closeMs: number };
  expect(seen).toMatchObject({ attack: 'returned', next: 'ok served' });
  expect(seen.closeMs).toBeLessThan(10_000); // ~2 s on a quiet machine; generous for a loaded one
}, 90_000);
