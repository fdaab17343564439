/**
 * A stopped call is stopped (docs/isolation.md, "A stopped call"). A tool
 * inside one long synchronous native call (`crypto.pbkdf2Sync` with a huge
 * count) ignores its signal, and Node cannot terminate its thread until the
 * native call returns. In the process and sandbox tiers the child is then
 * SIGKILLed (all its threads): the CPU is released, the child's other calls
 * are told why they were stopped, and the next call gets a fresh child. In
 * the worker tier the result says the call could not be stopped and still
 * runs, and the thread keeps its place under `workers.max` until it ends.
 * A thread that cannot be terminated because it is busy in garbage
 * collection near its heap limit ends on its own, out of memory, a few
 * seconds later: that call is told it reached its memory limit.
 * CPU is measured as CPU time (process.cpuUsage, /proc), which load does not
 * inflate; the bounds are generous.
 */
import { pbkdf2Sync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import type { Isolation } from '../../src/index.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);
const executors = useExecutors();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** pbkdf2 iterations for about `cpuMs` of CPU time, from the fastest of three samples (CPU time, so load does not skew it). */
function iterationsFor(cpuMs: number): number {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const before = process.cpuUsage();
    pbkdf2Sync('password', 'salt', 20_000, 64, 'sha512');
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return Math.round((20_000 * cpuMs) / Math.max(best, 0.5));
}

/** CPU ms used by this process's descendants (every thread of each), from /proc. */
function descendantsCpuMs(): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // ended meanwhile
    }
  }
  let total = 0;
  for (const [pid, used] of ticks) {
    for (let up = parents.get(pid); up !== undefined && up > 1; up = parents.get(up)) {
      if (up === process.pid) {
        total += used;
        break;
      }
    }
  }
  return total * 10; // clock ticks of 10 ms
}

const cpuMsOver = async (read: () => number, ms: number) => {
  const before = read();
  await sleep(ms);
  return read() - before;
};

describe('worker tier: a thread that cannot be terminated is not reported as killed', () => {
  test('the result says it still runs; it holds its place under workers.max until it ends', async () => {
    // A thread blocked opening a FIFO no one writes: a native call Node cannot interrupt, burning no CPU, that ends when
    // the test opens the other end.
    const fifo = join(mkdtempSync(join(tmpdir(), 'toolpool-fifo-')), 'block');
    execFileSync('mkfifo', [fifo]);
    const executor = await executors({
      tools: [fixture('walls/native-block.ts')],
      workers: { min: 1, max: 1 },
      limits: { timeoutMs: 300, abortGraceMs: 300 },
    });
    const first = await executor.executeBatch([call('1', 'native_block', { action: 'fifo', path: fifo })]);
    expect(first.results[0]!.isError).toBe(true);
    expect(textOf(first.results[0]!)).toMatch(
      /timed out after 300 ms .*ignored its signal and could not be stopped: .*native call.* still runs/,
    );
    // workers.max is 1 and the stuck thread holds it: the next call runs only once that thread ended.
    let secondDone = false;
    const second = executor
      .executeBatch([call('2', 'native_block', { action: 'sleep', ms: 0 })])
      .finally(() => (secondDone = true));
    await sleep(1_000);
    expect(secondDone).toBe(false);
    const writer = await open(fifo, 'w'); // the stuck open returns, and the terminated thread ends
    await writer.close();
    expect(textOf((await second).results[0]!)).toBe('slept 0');
  }, 60_000);

  test('a thread that ends of running out of memory soon after its kill is reported as reaching its memory limit', async () => {
    // JSON.parse grows the heap inside one native call that a terminate does not interrupt; near the 32 MB limit its
    // garbage collections run back to back, and the thread ends of running out of memory seconds after the kill (as a
    // heap bomb busy in GC on a loaded machine does). Told that it could not be stopped and still runs, the model would
    // be told the wrong cause.
    const executor = await executors({
      tools: [fixture('walls/native-block.ts')],
      workers: { min: 1, max: 1 },
      limits: { timeoutMs: 100, abortGraceMs: 100, maxMemoryMb: 32 },
    });
    const { results } = await executor.executeBatch([
      call('bomb', 'native_block', { action: 'parse', count: 600_000 }),
    ]);
    expect(textOf(results[0]!)).toMatch(/reached its memory limit \(maxMemoryMb: 32 MB\)/);
    expect(results[0]!.errorCode).toBe('MEMORY_LIMIT');
    const next = await executor.executeBatch([call('next', 'native_block', { action: 'sleep', ms: 0 })]);
    expect(textOf(next.results[0]!)).toBe('slept 0');
  }, 60_000);
});

/**
 * Two tools of one factory module: one trust domain, so one child runs both (`stuck_block` with `timeoutMs`, the
 * bystander with 60 s), warmed up so that two calls start at once in it, one thread each.
 */
async function stuckAndBystander(isolation: Isolation, timeoutMs: number) {
  const factory = fixture('walls/native-block-factory.ts');
  const executor = await executors({
    tools: [
      { module: factory, options: { name: 'stuck_block' } },
      { module: factory, options: { name: 'bystander_block' } },
    ],
    isolation,
    workers: { min: 1, max: 2 },
    limits: { timeoutMs, abortGraceMs: 300 },
    toolLimits: { bystander_block: { timeoutMs: 60_000 } },
  });
  await executor.executeBatch([call('0', 'stuck_block', { action: 'sleep', ms: 0 })]);
  return executor;
}

describe("worker tier: a cause is the host's reading, not the tool's", () => {
  test("an error the tool throws with Node's out-of-memory code does not turn its timeout into MEMORY_LIMIT", async () => {
    const executor = await executors({
      tools: [fixture('hostile/forged-oom.mjs')],
      workers: { min: 1, max: 1 },
      limits: { timeoutMs: 300, abortGraceMs: 300 },
    });
    const { results } = await executor.executeBatch([call('forged', 'forged_oom', {})]);
    expect(results[0]!.errorCode).toBe('TIMEOUT');
    expect(textOf(results[0]!)).not.toMatch(/memory limit/);
  }, 60_000);
});

describe.each(['process', ...(sandboxWorks ? ['sandbox'] : [])] as Isolation[])(
  '%s tier: a call that cannot be stopped inside the child takes the child with it',
  (isolation) => {
    test('SIGKILLed: CPU released, the co-runner told the true cause, a fresh child for the next call', async () => {
      const iterations = iterationsFor(20_000);
      // The bystander's own timeout is long, so it is still running when the stuck call's child is killed (about
      // 6.8 s in: timeout, grace, then 6 s to see that the thread did not end).
      const executor = await stuckAndBystander(isolation, 500);
      const { results } = await executor.executeBatch([
        call('stuck', 'stuck_block', { action: 'pbkdf2', iterations }),
        call('bystander', 'bystander_block', { action: 'sleep', ms: 30_000 }),
      ]);
      expect(textOf(results[0]!)).toMatch(
        /^Tool timed out after 500 ms \(limit timeoutMs\); it ignored its signal and was killed after the grace period\.$/,
      );
      expect(results[1]!.isError).toBe(true);
      expect(textOf(results[1]!)).toMatch(
        /SIGKILLed because another call running in it ignored its signal and could not be stopped/,
      );
      // Nothing of the child burns CPU any more (a stuck native call would burn about 1,500 ms of it here).
      expect(await cpuMsOver(descendantsCpuMs, 1_500)).toBeLessThan(500);
      const next = await executor.executeBatch([call('next', 'stuck_block', { action: 'sleep', ms: 0 })]);
      expect(textOf(next.results[0]!)).toBe('slept 0');
    }, 90_000);

    // An abort bounds the child's answer more tightly than a timeout (no load time on top): the child's verdict, six
    // seconds after its terminate, must still come before the host gives up on the child. Process tier only: the
    // sandbox's child is the same child and the same host deadline behind bwrap, and each case burns ~7 s of CPU.
    test.runIf(isolation === 'process')(
      'the same when the call is aborted, not timed out',
      async () => {
        const iterations = iterationsFor(20_000);
        const executor = await stuckAndBystander(isolation, 60_000);
        const controller = new AbortController();
        // Aborted once it runs (its update): a timed abort could come while a loaded machine still starts it.
        const stuck = executor.executeBatch([call('stuck', 'stuck_block', { action: 'pbkdf2', iterations })], {
          signal: controller.signal,
          onEvent: (event) => void (event.type === 'tool_update' && controller.abort()),
        });
        const bystander = executor.executeBatch([
          call('bystander', 'bystander_block', { action: 'sleep', ms: 30_000 }),
        ]);
        const [stopped, shared] = await Promise.all([stuck, bystander]);
        expect(textOf(stopped.results[0]!)).toBe(
          'Tool call aborted: the tool ignored its signal and was killed after the grace period.',
        );
        expect(textOf(shared.results[0]!)).toMatch(
          /SIGKILLed because another call running in it ignored its signal and could not be stopped/,
        );
        const next = await executor.executeBatch([call('next', 'stuck_block', { action: 'sleep', ms: 0 })]);
        expect(textOf(next.results[0]!)).toBe('slept 0');
      },
      90_000,
    );
  },
);
