/**
 * Trust domains: the unit of trust is the tool module. No worker thread,
 * child process or sandbox ever runs code of two different modules, so
 * whatever one module does to its realm (patched builtins, listeners,
 * forged messages) reaches only its own calls. These cases check the
 * structure itself (where each module's code ran) and one attack that the
 * realm watch does not see, on every tier.
 */
import { describe, expect, test } from 'vitest';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import type { Isolation, ToolResultMessage } from '../../src/index.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';
import { eventually, threadCount } from '../support/leaks.ts';

const createExecutor = useExecutors();
const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);

interface Seen {
  module: string;
  threadId: number;
  process: string;
  modules: string[];
}

const seenOf = (result: ToolResultMessage): Seen => {
  expect(result.isError, textOf(result)).toBe(false);
  return result.details as Seen;
};

const domain = (name: string) => fixture(`domains/${name}.ts`);

const tiers: Array<{ isolation: Isolation; skip?: string }> = [
  { isolation: 'worker' },
  { isolation: 'process' },
  // Skipped only where bubblewrap cannot start (no bwrap, or no user namespaces): the sandbox tier's own error says so.
  { isolation: 'sandbox', ...(sandboxWorks ? {} : { skip: 'bubblewrap cannot start here' }) },
];

describe.each(tiers)('trust domains, $isolation tier', ({ isolation, skip }) => {
  test.skipIf(skip !== undefined)(
    'no thread or process ever runs code of two modules, even with one worker',
    async () => {
      const executor = await createExecutor({
        tools: [domain('module-a'), domain('module-b'), domain('module-c')],
        isolation,
        workers: { min: 1, max: 1 },
      });
      const seen: Seen[] = [];
      for (let round = 0; round < 4; round++) {
        const batch = await executor.executeBatch([
          call(`a${round}`, 'domain_a', { ms: 5 }),
          call(`b${round}`, 'domain_b', { ms: 5 }),
          call(`c${round}`, 'domain_c'),
        ]);
        seen.push(...batch.results.map(seenOf));
      }
      for (const name of ['domain_a', 'domain_b', 'domain_c']) {
        const own = seen.filter((entry) => entry.module === name);
        const others = seen.filter((entry) => entry.module !== name);
        // Only its own code ever ran in the realms it ran in.
        for (const entry of own) expect(entry.modules).toEqual([name]);
        const threads = new Set(own.map((entry) => `${entry.process}/${entry.threadId}`));
        for (const other of others) expect(threads.has(`${other.process}/${other.threadId}`)).toBe(false);
        if (isolation !== 'worker') {
          const processes = new Set(own.map((entry) => entry.process));
          for (const other of others) expect(processes.has(other.process)).toBe(false);
        }
      }
    },
  );

  test.skipIf(skip !== undefined)(
    'builtins a module patches and leaves (outside the realm watch) never reach another module',
    async () => {
      const executor = await createExecutor({
        tools: [fixture('domains/tamper.ts'), fixture('domains/victim.ts')],
        isolation,
        workers: { min: 1, max: 1 },
      });
      for (let round = 0; round < 3; round++) {
        const batch = await executor.executeBatch([
          call(`t${round}`, 'tamper'),
          call(`v${round}`, 'victim', { word: 'delete' }),
        ]);
        expect(textOf(batch.results[0]!)).toBe('patched');
        expect(textOf(batch.results[1]!)).toBe('DELETE allowed=false');
      }
    },
  );

  test.skipIf(skip !== undefined)(
    'a factory module with different options is one domain: its tools may share a worker',
    async () => {
      const executor = await createExecutor({
        tools: [
          { module: domain('factory'), options: { tag: 'x' } },
          { module: domain('factory'), options: { tag: 'y' } },
        ],
        isolation,
        workers: { min: 1, max: 1 },
      });
      const batch = await executor.executeBatch([call('x', 'domain_factory_x'), call('y', 'domain_factory_y')]);
      const [x, y] = batch.results.map(seenOf);
      expect(x!.process).toBe(y!.process);
      expect(x!.threadId).toBe(y!.threadId);
    },
  );
});

describe('trust domains: sharing, the thread cap, reaping', () => {
  test('modules the host puts in one trustDomain share workers', async () => {
    const executor = await createExecutor({
      tools: [
        { module: domain('module-a'), trustDomain: 'pack' },
        { module: domain('module-b'), trustDomain: 'pack' },
        domain('module-c'),
      ],
      workers: { min: 1, max: 1 },
    });
    const batch = await executor.executeBatch([call('a', 'domain_a'), call('b', 'domain_b'), call('c', 'domain_c')]);
    const [a, b, c] = batch.results.map(seenOf);
    expect(a!.threadId).toBe(b!.threadId);
    expect(b!.modules).toEqual(['domain_a', 'domain_b']);
    expect(c!.threadId).not.toBe(a!.threadId);
    expect(c!.modules).toEqual(['domain_c']);
  });

  test('a trustDomain that is not a non-empty string is refused, naming the entry', async () => {
    await expect(createExecutor({ tools: [{ module: domain('module-a'), trustDomain: '' }] })).rejects.toThrow(
      /tools\[0\]\.trustDomain/,
    );
  });

  test('the modules share one cap on threads: workers.max calls run at once across all of them', async () => {
    let running = 0;
    let most = 0;
    const executor = await createExecutor({
      tools: [domain('module-a'), domain('module-b'), domain('module-c')],
      workers: { min: 0, max: 2 },
      host: {
        enter: async () => {
          most = Math.max(most, ++running);
          await new Promise((resolve) => setTimeout(resolve, 150));
        },
        leave: async () => void running--,
      },
    });
    const calls = ['a', 'b', 'c'].flatMap((name) => [
      call(`${name}1`, `domain_${name}`),
      call(`${name}2`, `domain_${name}`),
    ]);
    const batch = await executor.executeBatch(calls);
    for (const result of batch.results) seenOf(result);
    expect(most).toBe(2);
  });

  test("waiting for another module's thread is not a module's time: its prepareArguments does not time out for it", async () => {
    // One thread for both modules; the probe holds it for 6 s. quick_prepare's deadline for reading its module is its
    // timeoutMs (100) + loadTimeoutMs (5,000): a deadline that started before the thread was free would end it at
    // 5.1 s, while the thread is still held. (The load bound is generous so a slow machine's import never trips it.)
    const executor = await createExecutor({
      tools: [fixture('probe.ts'), domain('quick-prepare')],
      workers: { min: 0, max: 1, loadTimeoutMs: 5_000 },
    });
    const holding = executor.executeBatch([call('hold', 'probe', { action: 'sleep', ms: 6_000 })]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const waited = await executor.executeBatch([call('q', 'quick_prepare', { n: 1 })]);
    expect(textOf(waited.results[0]!)).toBe('prepared 2');
    expect(Date.now() - started).toBeGreaterThan(5_300); // it waited for the thread, past where a deadline started early would end
    expect(textOf((await holding).results[0]!)).toBe('slept 6000');
  }, 60_000);

  test('an idle module pool is reaped; its next call starts it again', async () => {
    const before = threadCount();
    const executor = await createExecutor({
      tools: [domain('module-a'), domain('module-b')],
      workers: { min: 1, max: 2, idleTimeoutMs: 200 },
    });
    const first = await executor.executeBatch([call('a', 'domain_a'), call('b', 'domain_b')]);
    for (const result of first.results) seenOf(result);
    expect(await eventually(threadCount, (count) => count <= before, 8_000)).toBeLessThanOrEqual(before);
    const again = await executor.executeBatch([call('a2', 'domain_a')]);
    expect(seenOf(again.results[0]!).module).toBe('domain_a');
  });
});
