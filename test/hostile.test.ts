/**
 * The hostile-tool suite: each case runs one misbehaving tool next to a
 * well-behaved call in the same batch, then checks that the misbehaving
 * call got an error result (or the safe outcome), the other call is intact,
 * the next call is served, and nothing is left running after close().
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createExecutor, type ExecutorOptions, type ToolResultMessage } from '../src/index.ts';
import { call, fixture, textOf } from './support/executors.ts';
import { childPids, eventually, threadCount } from './support/leaks.ts';

const scratch = mkdtempSync(join(tmpdir(), 'toolpool-hostile-'));
const outside = join(tmpdir(), `toolpool-outside-${process.pid}.txt`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const locked: Partial<ExecutorOptions> = { permissions: { fsRead: [scratch], fsWrite: [scratch] } };

interface HostileCase {
  name: string;
  fixture: string;
  options?: Partial<ExecutorOptions>;
  target?: string;
  /** The hostile call's result must satisfy this. */
  expectResult: (result: ToolResultMessage) => void;
  /** Extra check of the host after the batch. */
  expectHost?: () => void;
}

const errorMatching = (pattern: RegExp) => (result: ToolResultMessage) => {
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(pattern);
};

const cases: HostileCase[] = [
  {
    name: 'busy loop',
    fixture: 'busy-loop.ts',
    options: { limits: { timeoutMs: 300, abortGraceMs: 100 } },
    expectResult: errorMatching(/timed out after 300 ms .*killed after the grace period/),
  },
  {
    name: 'never-settling promise',
    fixture: 'never-settles.ts',
    options: { limits: { timeoutMs: 300, abortGraceMs: 100 } },
    expectResult: errorMatching(/timed out after 300 ms .*killed/),
  },
  {
    name: 'heap bomb',
    fixture: 'heap-bomb.ts',
    options: { limits: { maxMemoryMb: 64 } },
    expectResult: errorMatching(/memory limit \(maxMemoryMb: 64 MB\)/),
  },
  {
    name: 'Buffer bomb (process tier caps the whole process)',
    fixture: 'buffer-bomb.ts',
    options: { limits: { maxMemoryMb: 128 } },
    expectResult: errorMatching(/memory limit \(maxMemoryMb: 128 MB\)/),
  },
  {
    name: 'deep recursion',
    fixture: 'deep-recursion.ts',
    expectResult: errorMatching(/Maximum call stack size exceeded/),
  },
  { name: 'process.exit', fixture: 'exit.ts', expectResult: errorMatching(/worker exited with code 3/) },
  { name: 'uncaught error in a timer', fixture: 'timer-throw.ts', expectResult: errorMatching(/boom from a timer/) },
  {
    name: 'error after return',
    fixture: 'error-after-return.ts',
    expectResult: (r) => expect(textOf(r)).toBe('returned'),
  },
  {
    name: 'unhandled rejection after return',
    fixture: 'rejection-after-return.ts',
    expectResult: (r) => expect(textOf(r)).toBe('returned'),
  },
  {
    name: 'process.kill of its own pid (process tier)',
    fixture: 'kill-own-pid.ts',
    expectResult: errorMatching(/isolation process died \(signal SIGKILL\)/),
  },
  {
    name: 'native crash, SIGSEGV (process tier)',
    fixture: 'native-crash.ts',
    expectResult: errorMatching(/isolation process died \(signal SIGSEGV\)/),
  },
  {
    name: 'reading a secret from process.env',
    fixture: 'read-env.ts',
    target: 'TOOLPOOL_TEST_SECRET',
    expectResult: (r) => {
      expect(textOf(r)).toBe('(unset)');
      expect(r.details).toEqual({ names: [] });
    },
  },
  {
    name: 'reading /etc/passwd with permissions on',
    fixture: 'read-file.ts',
    options: locked,
    target: '/etc/passwd',
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted/),
  },
  {
    name: 'writing outside the scratch root with permissions on',
    fixture: 'write-file.ts',
    options: locked,
    target: outside,
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted/),
    expectHost: () => expect(existsSync(outside)).toBe(false),
  },
  {
    name: 'spawning a child process with permissions on',
    fixture: 'spawn-child.ts',
    options: locked,
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted/),
  },
  {
    name: 'spawning a nested worker with permissions on',
    fixture: 'nested-worker.ts',
    options: locked,
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted/),
  },
  {
    name: 'loading a native addon with permissions on',
    fixture: 'native-addon.ts',
    options: locked,
    expectResult: errorMatching(/loading addons is disabled/),
  },
  {
    name: 'a 64 MiB result',
    fixture: 'huge-result.ts',
    expectResult: errorMatching(/result is \d+ bytes, over the limit maxResultBytes \(8388608 bytes\)/),
  },
  {
    name: 'an update flood of 200,000 updates',
    fixture: 'update-flood.ts',
    expectResult: (r) => expect(textOf(r)).toBe('flood done'),
  },
  {
    name: 'a non-cloneable result (class instance with methods)',
    fixture: 'non-cloneable.ts',
    expectResult: errorMatching(/result.details.handle is an instance of Handle, not plain data/),
  },
  {
    name: 'a result with a __proto__ key',
    fixture: 'proto-key.ts',
    expectResult: (r) => {
      expect(r.isError).toBe(false);
      expect(Object.getPrototypeOf(r.details)).toBe(Object.prototype);
    },
    expectHost: () => expect(({} as Record<string, unknown>).polluted).toBeUndefined(),
  },
  {
    name: 'mutating Object.prototype inside the worker',
    fixture: 'mutate-prototype.ts',
    expectResult: (r) => expect(textOf(r)).toBe('mutated'),
    expectHost: () => expect(({} as Record<string, unknown>).hijacked).toBeUndefined(),
  },
];

describe('hostile tools', () => {
  test.each(cases)('$name', async (hostile) => {
    process.env.TOOLPOOL_TEST_SECRET = 'hunter2';
    const threadsBefore = threadCount();
    const executor = await createExecutor({
      tools: [fixture(`hostile/${hostile.fixture}`), fixture('probe.ts')],
      workers: { min: 1, max: 2 },
      ...hostile.options,
    });
    try {
      const batch = await executor.executeBatch([
        call('hostile', executor.definitions[0]!.name, hostile.target ? { target: hostile.target } : {}),
        call('bystander', 'probe', { action: 'sleep', ms: 20, tag: 'intact' }),
      ]);
      hostile.expectResult(batch.results[0]!);
      expect(batch.results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'slept 20 intact' }] });
      hostile.expectHost?.();

      const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'served' })]);
      expect(textOf(next.results[0]!)).toBe('ok served');
    } finally {
      await executor.close();
    }
    expect(await eventually(childPids, (pids) => pids.length === 0)).toEqual([]);
    expect(await eventually(threadCount, (count) => count <= threadsBefore)).toBeLessThanOrEqual(threadsBefore);
  });
});
