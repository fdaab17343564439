/**
 * Process-tier escapes (issue 9, items 7 and 8): attacks on the child
 * process, its channel to the host, the compile cache and what the child
 * inherits. Each case asserts an error result or the safe outcome, that
 * the host is alive and the next call is served. Where the process tier
 * cannot stop an attack, the case shows that it is not stopped, as the
 * README says.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { processLauncher, type ChildLauncher, type ChildSpec } from '../../src/isolation/process/child-launcher.ts';
import { nodeReservation } from '../../src/isolation/process/node-reservation.ts';
import { permissionSupport } from '../../src/isolation/common/permissions.ts';
import { pidNamespaceSupport } from '../../src/isolation/process/pid-namespace.ts';
import { ProcessTier, type ProcessTierOptions } from '../../src/isolation/process/process-tier.ts';
import { Tiers } from '../../src/isolation/tiers.ts';
import { PassThrough } from 'node:stream';
import { DEFAULT_LIMITS } from '../../src/core/limits.ts';
import { toRunnableModule } from '../../src/isolation/worker/module-compiler.ts';
import type { RunOutcome } from '../../src/core/runner.ts';
import { createExecutor as create } from '../../src/index.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';
import { childPids, eventually } from '../support/leaks.ts';

const createExecutor = useExecutors();
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-process-hostile-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const tsx = ['--import', 'tsx'];

/** The fake child in `mode` where the real child would start: the real child's flags, a hostile entry. */
function launchFake(spec: ChildSpec, mode: string) {
  return processLauncher.launch({
    ...spec,
    nodeArgs: [...spec.nodeArgs.slice(0, -1), fixture('process-tier/fake-child.mjs')],
    env: { ...spec.env, TOOLPOOL_FAKE_MODE: mode },
  });
}

/** A ProcessTier whose first `hostileLaunches` children are the fake child in `mode`; later ones are the real child. */
function tierWithFakeChild(mode: string, options: Partial<ProcessTierOptions> = {}, hostileLaunches = 1) {
  let launches = 0;
  const launcher: ChildLauncher = {
    name: 'fake',
    launch: (spec) => (launches++ >= hostileLaunches ? processLauncher.launch(spec) : launchFake(spec, mode)),
  };
  const tier = new ProcessTier({
    minWorkers: 1,
    maxWorkers: 1,
    idleTimeoutMs: 5_000,
    loadTimeoutMs: 1_000,
    env: {},
    execArgv: [],
    hostFunctions: { echo: async (value: unknown) => value },
    defaultMemoryMb: 64,
    launcher,
    ...options,
  });
  return { tier, launches: () => launches };
}

/** A launcher whose every launch takes `ms` first (a loaded machine), then launches as `launch` does. */
function slowLauncher(ms: number, launch: ChildLauncher['launch']): ChildLauncher {
  return {
    name: 'slow',
    launch: async (spec) => (await new Promise((resolve) => setTimeout(resolve, ms)), launch(spec)),
  };
}

async function probeRef() {
  const module = await toRunnableModule(fixture('probe.ts'));
  return { module, source: module };
}

const limits = { ...DEFAULT_LIMITS, maxMemoryMb: 64, timeoutMs: 500, abortGraceMs: 100, maxResultBytes: 1 << 20 };
const run = (tier: ProcessTier, ref: Awaited<ReturnType<typeof probeRef>>, tag = 'next'): Promise<RunOutcome> =>
  tier.execute({ callId: 'c', args: { action: 'ok', tag }, limits, onUpdate: () => {} }, ref);
/**
 * A call that a real child serves after the attack: that child first starts its worker and imports the tool
 * from TypeScript sources, which a loaded machine stretched past the attacked call's 0.5 s (+ 1 s load).
 */
const runInRealChild = (tier: ProcessTier, ref: Awaited<ReturnType<typeof probeRef>>): Promise<RunOutcome> =>
  tier.execute(
    { callId: 'c', args: { action: 'ok', tag: 'next' }, limits: { ...limits, timeoutMs: 30_000 }, onUpdate: () => {} },
    ref,
  );
/**
 * For a tier whose later call runs in a real child: that child starts a worker and imports the tool, which took
 * over the helper's 1 s load bound on a loaded machine (Node 24, beside another test file).
 */
const realChildLoad = { loadTimeoutMs: 5_000 };
const errorOf = (outcome: RunOutcome) =>
  outcome.ok ? `(no error: ${JSON.stringify(outcome.result).slice(0, 100)})` : outcome.error;

/** The N of "did not answer the execute request within N ms": computed by the host from its deadline, not timed. */
const deadlineOf = (outcome: RunOutcome) =>
  Number(/did not answer the execute request within (\d+) ms, so it was killed/.exec(errorOf(outcome))?.[1]);

describe('process tier: a hostile child main thread', () => {
  test.each([
    ['forge-later', /broke the protocol \(it sent "executed" for request \d+, which is not open\)/],
    ['wrong-kind', /broke the protocol \(it sent "described" for request \d+, which expects another reply\)/],
    ['junk', /broke the protocol \(it sent a message that is not an object\)/],
    ['bad-outcome', /broke the protocol \(it sent an outcome that is neither a result nor an error\)/],
    ['bad-usage', /broke the protocol \(it sent an outcome with a malformed "usage.cpuMs" \(-1\)\)/],
    ['string-usage', /broke the protocol \(it sent an outcome with a malformed "usage" \("lots"\)\)/],
    ['oversized-result', /result is \d+ bytes, over the limit maxResultBytes \(1048576 bytes\)/],
    // Refused from the frame's header, before the host keeps its body.
    [
      'oversized-frame',
      /broke the protocol \(it sent a frame of \d+ bytes, over the 1114112 bytes a message may have here\)/,
    ],
  ])('%s: the call gets an error, the child is replaced, the next call is served', async (mode, expected) => {
    const { tier, launches } = tierWithFakeChild(mode, realChildLoad);
    try {
      const ref = await probeRef();
      const outcome = await run(tier, ref, 'attacked');
      expect(errorOf(outcome)).toMatch(expected);
      const next = await runInRealChild(tier, ref);
      // A broken protocol costs the child (the next call runs in a real one); an oversized result only costs the call.
      const replaced = mode !== 'oversized-result';
      // A real child relays what its worker measured; the fake one reports nothing.
      const usage = replaced
        ? {
            usage: expect.objectContaining({
              queuedMs: expect.any(Number),
              runningMs: expect.any(Number),
              heapUsedBytes: expect.any(Number),
            }),
          }
        : {};
      expect(next).toEqual({
        ok: true,
        result: expect.objectContaining({ content: [{ type: 'text', text: replaced ? 'ok next' : 'honest' }] }),
        ...usage,
      });
      expect(launches()).toBe(replaced ? 2 : 1);
    } finally {
      await tier.close();
    }
  });

  test('an update larger than maxResultBytes from the child fails the call and reaches no listener', async () => {
    const { tier } = tierWithFakeChild('oversized-update');
    try {
      const seen: unknown[] = [];
      const outcome = await tier.execute(
        { callId: 'c', args: { action: 'ok', tag: 'x' }, limits, onUpdate: (partial) => void seen.push(partial) },
        await probeRef(),
      );
      expect(errorOf(outcome)).toMatch(/update is \d+ bytes, over the limit maxResultBytes \(1048576 bytes\)/);
      expect(seen).toEqual([]);
    } finally {
      await tier.close();
    }
  });

  test("host-call arguments larger than the running calls' maxResultBytes are refused before the host function runs", async () => {
    let ran = 0;
    const { tier } = tierWithFakeChild('host-huge-argument', {
      hostFunctions: { echo: async (value: unknown) => (ran++, value) },
    });
    try {
      const outcome = await run(tier, await probeRef());
      expect(outcome).toMatchObject({
        ok: true,
        result: {
          content: [
            {
              text: expect.stringMatching(
                /^refused: Host call echo\(\) refused: its arguments are \d+ bytes, over the limit maxResultBytes \(1048576 bytes\)/,
              ),
            },
          ],
        },
      });
      expect(ran).toBe(0);
    } finally {
      await tier.close();
    }
  });

  test('an error text of 5 MB arrives cut to a few KB', async () => {
    const { tier } = tierWithFakeChild('huge-error');
    try {
      const outcome = await run(tier, await probeRef());
      expect(outcome.ok).toBe(false);
      expect(errorOf(outcome).length).toBeLessThan(5_000);
    } finally {
      await tier.close();
    }
  });

  test('a request that finds its child worn out goes to the next child, and is not failed with the old one', async () => {
    const { tier, launches } = tierWithFakeChild('exhausted-silent', realChildLoad);
    try {
      const ref = await probeRef();
      let wornOut!: () => void;
      const told = new Promise<void>((resolve) => (wornOut = resolve));
      const first = tier.execute({ callId: 'c', args: { action: 'ok' }, limits, onUpdate: () => wornOut() }, ref);
      await told;
      // The worn-out child takes no new request: it is replaced, and the describe is the next child's first.
      const view = await tier.describe(ref);
      expect(view.definition.name).toBe('probe');
      expect(errorOf(await first)).toMatch(/open descriptors/);
      expect(launches()).toBe(2);
    } finally {
      await tier.close();
    }
  }, 30_000);

  test("a child whose start failed is forgotten: its exit neither ends the next start nor orphans that child's calls", async () => {
    // Launch 1: a child whose first message is not "ready" (its start fails and it is killed). Launch 2 takes 1 s, so
    // the first child's exit comes while it is on its way. Found reading the code after a sandbox soak lost 246 calls.
    let launches = 0;
    const launcher: ChildLauncher = {
      name: 'slow second',
      async launch(spec) {
        const launch = launches++;
        if (launch === 0) return launchFake(spec, 'not-ready');
        if (launch === 1) await new Promise((resolve) => setTimeout(resolve, 1_000));
        return processLauncher.launch(spec);
      },
    };
    const { tier } = tierWithFakeChild('not-ready', { launcher, ...realChildLoad });
    try {
      const ref = await probeRef();
      expect(errorOf(await run(tier, ref, 'first'))).toMatch(/its first message was not "ready"/);
      let running!: () => void;
      const started = new Promise<void>((resolve) => (running = resolve));
      const slow = tier.execute(
        {
          callId: 'slow',
          args: { action: 'honour-signal', ms: 1_500 },
          limits: { ...limits, timeoutMs: 30_000 },
          onUpdate: () => running(),
        },
        ref,
      );
      await started;
      // The second child runs a call: the next call goes to it as well, not to a third child that would orphan it.
      expect(await runInRealChild(tier, ref)).toMatchObject({ ok: true });
      expect(await slow).toMatchObject({ ok: true, result: { content: [{ text: 'finished' }] } });
      expect(launches).toBe(2);
    } finally {
      await tier.close();
    }
  }, 90_000);

  test('a call aborted while it waits for its child is aborted before it started, and never runs there', async () => {
    // Before, the abort went to the child before the call did (the child ignored it), and the call then ran unstopped
    // until the host's shortened bound killed the child with every call in it.
    const launcher = slowLauncher(2_000, (spec) => processLauncher.launch(spec));
    const { tier } = tierWithFakeChild('unused', { launcher, ...realChildLoad });
    try {
      const ref = await probeRef();
      const waitsLong = { ...limits, timeoutMs: 30_000 };
      const controller = new AbortController();
      let ran = false;
      const aborted = tier.execute(
        {
          callId: 'aborted',
          args: { action: 'honour-signal', ms: 15_000 },
          limits: waitsLong,
          signal: controller.signal,
          onUpdate: () => {
            ran = true;
          },
        },
        ref,
      );
      const other = tier.execute(
        { callId: 'other', args: { action: 'honour-signal', ms: 1_000 }, limits: waitsLong, onUpdate: () => {} },
        ref,
      );
      setTimeout(() => controller.abort(new Error('stop')), 500);
      expect(await aborted).toEqual({ ok: false, error: 'Tool call aborted before it started.', code: 'ABORTED' });
      expect(await other).toMatchObject({ ok: true, result: { content: [{ text: 'finished' }] } });
      expect(ran).toBe(false);
    } finally {
      await tier.close();
    }
  }, 60_000);

  test('a launch that cannot be spawned fails its calls with the cause and is cleaned up', async () => {
    let cleanups = 0;
    const launcher = (args: (spec: ChildSpec) => { command: string; args: string[] }): ChildLauncher => ({
      name: 'unspawnable',
      async launch(spec) {
        const launch = await processLauncher.launch(spec);
        return { ...launch, ...args(spec), cleanup: () => (cleanups++, launch.cleanup?.()) };
      },
    });
    // Thrown by spawn itself (a NUL byte in an argument), and reported as an 'error' event (no such command).
    const cases = [
      {
        make: launcher((spec) => ({ command: spec.node, args: ['bad\0arg'] })),
        error: /could not start: .*null bytes/,
      },
      {
        make: launcher(() => ({ command: join(scratch, 'no-such-command'), args: [] })),
        error: /could not start: .*ENOENT/,
      },
    ];
    for (const { make, error } of cases) {
      const { tier } = tierWithFakeChild('unused', { launcher: make });
      try {
        const ref = await probeRef();
        const before = cleanups;
        expect(errorOf(await run(tier, ref))).toMatch(error);
        await eventually(
          () => cleanups,
          (count) => count === before + 1,
        );
        expect(cleanups).toBe(before + 1);
      } finally {
        await tier.close();
      }
    }
  }, 30_000);

  /** A tier whose first child exits at its first call, with a stderr that never ends (its verdict waits the full 1 s). */
  function tierWithDyingChild() {
    let launches = 0;
    let firstGone!: () => void;
    const gone = new Promise<void>((resolve) => (firstGone = resolve));
    const launcher: ChildLauncher = {
      name: 'fake',
      async launch(spec) {
        const mode = launches++ === 0 ? 'exit-on-execute' : 'forge-earlier';
        const launch = await launchFake(spec, mode);
        if (mode !== 'exit-on-execute') return launch;
        return { ...launch, stderr: new PassThrough(), cleanup: () => (launch.cleanup?.(), firstGone()) };
      },
    };
    // The fake-child tier's options, with this launcher in place of its own.
    const { tier } = tierWithFakeChild('exit-on-execute', { launcher });
    return { tier, gone };
  }

  test("a dead child's calls are its own: the next child can neither answer them nor pass them its fate", async () => {
    const { tier, gone } = tierWithDyingChild();
    try {
      const ref = await probeRef();
      const first = run(tier, ref);
      await gone;
      // While the dead child's verdict waits for its stderr, the next child answers the dead child's call.
      const second = tier.describe(ref).then(
        () => 'described',
        (error: unknown) => String(error),
      );
      expect(errorOf(await first)).toMatch(/isolation process died \(exit code 3\)/);
      expect(await second).toMatch(/broke the protocol \(it sent "executed" for request \d+, which is not open\)/);
    } finally {
      await tier.close();
    }
  }, 30_000);

  test("close() returns once a dead child's calls have their true cause", async () => {
    const { tier, gone } = tierWithDyingChild();
    let settled: RunOutcome | undefined;
    const first = run(tier, await probeRef()).then((outcome) => (settled = outcome));
    await gone;
    await tier.close();
    expect(settled && errorOf(settled)).toMatch(/isolation process died \(exit code 3\)/);
    await first;
  }, 30_000);

  test('host functions are looked up as own properties: "constructor" does not reach Object', async () => {
    const { tier } = tierWithFakeChild('host-proto', realChildLoad);
    try {
      const outcome = await run(tier, await probeRef());
      expect(outcome).toMatchObject({
        ok: true,
        result: {
          content: [{ text: 'refused: Host call constructor() refused: it is not a function the host granted.' }],
        },
      });
      expect(await runInRealChild(tier, await probeRef())).toMatchObject({ ok: true });
    } finally {
      await tier.close();
    }
  });

  test.skipIf(process.platform !== 'linux')(
    "with permissions, the child's own main thread runs under the same permission flags",
    async () => {
      const tiers = new Tiers({
        minWorkers: 1,
        maxWorkers: 1,
        idleTimeoutMs: 1_000,
        loadTimeoutMs: 5_000,
        env: {},
        permissions: { fsRead: [scratch] },
        hostFunctions: {},
        defaultMemoryMb: 64,
        moduleFiles: [(await probeRef()).module, fixture('process-tier/fake-child.mjs')],
      });
      for (const mode of ['read-passwd', 'escape-via-worker']) {
        const { tier } = tierWithFakeChild(mode, tiers.processOptions(), 1);
        try {
          const outcome = await run(tier, await probeRef());
          // escape-via-worker: a worker started with execArgv: [] by a --allow-worker process would be unrestricted
          expect(outcome).toMatchObject({ ok: true, result: { content: [{ text: 'denied: ERR_ACCESS_DENIED' }] } });
        } finally {
          await tier.close();
        }
      }
    },
  );
});

// These wait on the host's deadlines and the child's timers, not on the CPU: they run side by side.
describe.concurrent('process tier: a hostile child main thread, against the clock', () => {
  test('a flood of slow host calls from the child runs at most 64 at once and refuses what does not fit the queue', async () => {
    let running = 0;
    let peak = 0;
    // The first calls hold their slots for 5 s: the child sends its 6,000 calls in one loop, so all of them have
    // arrived by then however loaded the machine is, and what does not fit (64 running + 4,096 queued) is refused.
    // (With a short hold, a slow machine spread the arrivals out and the queue drained as fast as it filled.)
    let gate: Promise<unknown> | undefined;
    const echo = async (value: unknown) => {
      peak = Math.max(peak, ++running);
      gate ??= new Promise((resolve) => setTimeout(resolve, 5_000));
      await gate;
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
      return value;
    };
    const { tier } = tierWithFakeChild('host-flood', { hostFunctions: { echo } });
    try {
      const outcome = await tier.execute(
        { callId: 'c', args: {}, limits: { ...limits, timeoutMs: 30_000 }, onUpdate: () => {} },
        await probeRef(),
      );
      const [answered, refused] = (outcome.ok ? textOf(outcome.result) : outcome.error).match(/\d+/g)!.map(Number);
      expect(answered! + refused!).toBe(6_000);
      expect(answered).toBeGreaterThanOrEqual(64 + 4_096);
      expect(refused).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(64);
    } finally {
      await tier.close();
    }
  }, 60_000);

  test('a child that stops answering: the call ends at the host-side deadline, the child is SIGKILLed, the next call starts a new one', async () => {
    const { tier, launches } = tierWithFakeChild('silent', realChildLoad);
    try {
      const ref = await probeRef();
      const started = Date.now();
      const outcome = await run(tier, ref);
      // load (5 s) + timeoutMs (0.5 s) + abortGraceMs (0.1 s) + the 5 s margin: a child that never said it terminated
      // a thread is not given the 6 s a thread's verdict may take
      expect(errorOf(outcome)).toMatch(/did not answer the execute request within 10600 ms, so it was killed/);
      expect(Date.now() - started).toBeLessThan(25_000);
      expect(await runInRealChild(tier, ref)).toMatchObject({ ok: true });
      expect(launches()).toBe(2);
    } finally {
      await tier.close();
    }
  }, 30_000);

  test('an abort that comes late does not move the host-side deadline of a silent child past its first one', async () => {
    const { tier } = tierWithFakeChild('silent');
    try {
      const ref = await probeRef();
      const aborted = new AbortController();
      // 4.5 s in, 2.1 s before the 6.6 s deadline: a deadline of abortGraceMs + the margin from now would be later.
      setTimeout(() => aborted.abort(), 4_500);
      const outcome = await tier.execute(
        { callId: 'c', args: { action: 'ok', tag: 'late' }, limits, onUpdate: () => {}, signal: aborted.signal },
        ref,
      );
      expect(errorOf(outcome)).toMatch(/did not answer the execute request within 6600 ms, so it was killed/);
    } finally {
      await tier.close();
    }
  }, 40_000);

  test("a child that says it terminated the call's thread gets 11 s for the verdict, once, however often it says so", async () => {
    const { tier } = tierWithFakeChild('terminated-again');
    try {
      const started = Date.now();
      const outcome = await run(tier, await probeRef());
      // The 6 s a thread's verdict may take + the 5 s margin, from the first notice (sent as the call arrived, before
      // the 1.6 s the call was due to stop at the latest), not from the last.
      expect(deadlineOf(outcome)).toBeGreaterThanOrEqual(11_000);
      expect(deadlineOf(outcome)).toBeLessThanOrEqual(12_600);
      expect(Date.now() - started).toBeGreaterThanOrEqual(11_000);
    } finally {
      await tier.close();
    }
  }, 40_000);

  test('a notice held back to the last moment gains nothing: the verdict is due 11 s after the call was due to stop', async () => {
    const { tier } = tierWithFakeChild('terminated-late');
    try {
      const outcome = await run(tier, await probeRef());
      // Due to stop at 1.6 s (load + timeoutMs + abortGraceMs), so given up at 12.6 s exactly; counted from a notice
      // at ~5.5 s, it would have been ~16.6 s. (6.6 s, the plain deadline, if a loaded machine delays the notice past it.)
      expect([6_600, 12_600]).toContain(deadlineOf(outcome));
    } finally {
      await tier.close();
    }
  }, 40_000);

  test('an abort after the notice still bounds the call: no later than the verdict due from the notice', async () => {
    const { tier } = tierWithFakeChild('terminated-again');
    try {
      const ref = await probeRef();
      const aborted = new AbortController();
      const outcome = await tier.execute(
        {
          callId: 'c',
          args: { action: 'ok', tag: 'aborted' },
          limits: { ...limits, timeoutMs: 60_000 },
          // Its update follows the notice: aborted once the host has read the notice.
          onUpdate: () => aborted.abort(),
          signal: aborted.signal,
        },
        ref,
      );
      // The verdict is due 11 s after the notice, and the abort's own bound (its grace and the 5 s margin) is earlier.
      // Without the abort it would be 66.6 s (load + 60 s + grace + margin).
      expect(deadlineOf(outcome)).toBeLessThan(20_000);
    } finally {
      await tier.close();
    }
  }, 40_000);

  test('a launch that never ends: calls waiting for it end by their own bound, the start by its own, and the next start serves', async () => {
    // Before, a call waited for its child's start before it looked at its answer: a launch that never settled kept
    // every call of the tier pending past its deadline, holding its share of the thread budget (a soak's hang fits this).
    let launches = 0;
    let cleanups = 0;
    const launcher: ChildLauncher = {
      name: 'stuck first',
      async launch(spec) {
        if (launches++ === 0) {
          // Arrives after the start's 20 s bound: it is cleaned up, and no child is spawned from it.
          await new Promise((resolve) => setTimeout(resolve, 21_000));
          const launch = await processLauncher.launch(spec);
          return { ...launch, cleanup: () => (cleanups++, launch.cleanup?.()) };
        }
        return processLauncher.launch(spec);
      },
    };
    const { tier } = tierWithFakeChild('unused', { launcher, ...realChildLoad });
    try {
      const ref = await probeRef();
      const waitsLong = { ...limits, timeoutMs: 30_000 };
      const patient = tier.execute(
        { callId: 'patient', args: { action: 'ok', tag: 'p' }, limits: waitsLong, onUpdate: () => {} },
        ref,
      );
      const started = Date.now();
      const first = await run(tier, ref, 'first');
      // Its bound: loadTimeoutMs 5 s + timeoutMs 0.5 s + abortGraceMs 0.1 s + 5 s margin.
      expect(errorOf(first)).toBe(
        'Tool crashed: the isolation process could not start: its start took longer than the 10600 ms the execute request may wait',
      );
      expect(first).toMatchObject({ code: 'CRASHED' });
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(errorOf(await patient)).toMatch(/could not start: its launch did not finish within 20000 ms/);
      expect(await runInRealChild(tier, ref)).toMatchObject({ ok: true });
      expect(launches).toBe(2);
      await eventually(
        () => cleanups,
        (count) => count === 1,
      );
      expect(cleanups).toBe(1);
    } finally {
      await tier.close();
    }
  }, 90_000);

  test('a child that took long to start has its whole bound from when it got the request', async () => {
    // A launch that takes 3 s (a loaded machine): the 6.6 s the silent child has count from the request's sending.
    const launcher = slowLauncher(3_000, (spec) => launchFake(spec, 'silent'));
    const { tier } = tierWithFakeChild('silent', { launcher });
    try {
      const ref = await probeRef();
      const started = Date.now();
      const outcome = await run(tier, ref);
      expect(deadlineOf(outcome)).toBe(6_600);
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_600);
    } finally {
      await tier.close();
    }
  }, 40_000);
});

describe('process tier: what a tool can reach from its worker', () => {
  test('a nested worker with execArgv: [] (unrestricted in a --permission process) is refused', async () => {
    const executor = await createExecutor({
      tools: [fixture('process-tier/nested-worker-empty-argv.ts'), fixture('probe.ts')],
      permissions: { fsRead: [scratch] },
    });
    const { results } = await executor.executeBatch([
      call('1', 'nested_worker_empty_argv'),
      call('2', 'probe', { action: 'ok' }),
    ]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/ERR_ACCESS_DENIED|Access to this API has been restricted/);
    expect(textOf(results[1]!)).toBe('ok');
  });

  test("/proc/self/environ shows only the clean env (and one malloc arena); the host's own environ is readable without permissions, denied with them", async () => {
    {
      const open = await createExecutor({ tools: [fixture('process-tier/read-environ.ts')], env: { VISIBLE: 'yes' } });
      const locked = await createExecutor({
        tools: [fixture('process-tier/read-environ.ts')],
        permissions: { fsRead: [scratch] },
      });
      const read = async (executor: typeof open, target: string) =>
        textOf((await executor.executeBatch([call('1', 'read_environ', { target })])).results[0]!);
      // Only the clean env (plus PWD, the child's own working folder, which bubblewrap sets, and toolpool's one
      // malloc arena, which keeps the data cap's room for a replacement worker: see CHILD_MALLOC_ARENAS).
      expect((await read(open, 'self')).split('\n').filter((line) => !line.startsWith('PWD='))).toEqual([
        'MALLOC_ARENA_MAX=1',
        'VISIBLE=yes',
      ]);
      // An env that sets the arenas itself is kept as given.
      const ownArenas = await createExecutor({
        tools: [fixture('process-tier/read-environ.ts')],
        env: { MALLOC_ARENA_MAX: '4' },
      });
      expect((await read(ownArenas, 'self')).split('\n').filter((line) => !line.startsWith('PWD='))).toEqual([
        'MALLOC_ARENA_MAX=4',
      ]);
      // (procfs shows the environment the host was started with, so PATH stands for any secret in it.)
      if (await pidNamespaceSupport()) {
        // In its own PID namespace the child's parent is bubblewrap, started with the same clean env; the host's pid does not exist.
        expect(await read(open, 'parent')).not.toMatch(/^PATH=/m);
      } else {
        // Without bubblewrap, not stopped without permissions (same user), as the README says.
        expect(await read(open, 'parent')).toMatch(/^PATH=/m);
      }
      expect(await read(locked, 'parent')).toBe('denied: ERR_ACCESS_DENIED');
    }
  });

  // bash puts the secret on descriptor 300 without close-on-exec (Node marks only its low descriptors close-on-exec).
  test.skipIf(!existsSync('/bin/bash'))(
    'a secret the host holds on a descriptor without close-on-exec cannot be read by a tool (permissions on)',
    () => {
      const secretFile = join(scratch, 'fd-secret.txt');
      writeFileSync(secretFile, 'FD-SECRET-CONTENT');
      const command = `exec 300<"$1"; exec "$2" --import tsx "$3" "$4"`;
      const host = spawnSync(
        '/bin/bash',
        ['-c', command, 'bash', secretFile, process.execPath, fixture('process-tier/host-with-fd.ts'), scratch],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(host.stderr).not.toMatch(/Error/);
      expect(host.stdout).toContain('(nothing)');
      expect(host.stdout).not.toContain('FD-SECRET-CONTENT');
    },
  );

  test("a tool's kill(0) hits only the child's own session, not the host's process group", async () => {
    const outcome = await runDetachedHost('group');
    expect(outcome.stdout).toContain('executor ready');
    expect(outcome.stdout).toMatch(/host survived: .*isolation process died \(signal SIGKILL\)/);
    expect(outcome.signal).toBeNull();
  });

  test('process.kill(process.ppid) does not reach the host: the child has a PID namespace of its own (not stopped without bubblewrap)', async () => {
    const outcome = await runDetachedHost('parent');
    expect(outcome.stdout).toContain('executor ready');
    if (await pidNamespaceSupport()) {
      expect(outcome.stdout).toContain('host survived');
      expect(outcome.signal).toBeNull();
    } else {
      expect(outcome.stdout).not.toContain('host survived');
      expect(outcome.signal).toBe('SIGKILL');
    }
  });
});

/** Runs host-signalled.ts in a process group of its own, so a signal to "the host's group" cannot reach this test runner. */
function runDetachedHost(target: 'group' | 'parent'): Promise<{ stdout: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const host = spawn(process.execPath, [...tsx, fixture('process-tier/host-signalled.ts'), target], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    host.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const timer = setTimeout(() => host.kill('SIGKILL'), 60_000);
    host.on('error', reject);
    host.on('exit', (_code, signal) => {
      clearTimeout(timer);
      resolve({ stdout, signal });
    });
  });
}

describe('process tier: the compile cache', () => {
  test('a tool that overwrites a compiled module in the cache does not change what a later executor runs', async () => {
    const victim = fixture('process-tier/victim.ts');
    const compiled = await toRunnableModule(victim);
    const attacker = await createExecutor({ tools: [fixture('process-tier/write-file-at.ts')] });
    const { results } = await attacker.executeBatch([call('1', 'write_file_at', { target: compiled })]);
    expect(textOf(results[0]!)).toBe('written'); // without permissions the process tier cannot stop the write itself
    const later = await createExecutor({ tools: [victim], permissions: { fsRead: [scratch] } });
    const after = await later.executeBatch([call('2', 'victim')]);
    expect(textOf(after.results[0]!)).toBe('honest');
  });

  test('with permissions a tool cannot write into the cache, and fsWrite may not cover it', async () => {
    const compiled = await toRunnableModule(fixture('process-tier/victim.ts'));
    const locked = await createExecutor({
      tools: [fixture('process-tier/write-file-at.ts')],
      permissions: { fsRead: [scratch], fsWrite: [scratch] },
    });
    const { results } = await locked.executeBatch([call('1', 'write_file_at', { target: compiled })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/ERR_ACCESS_DENIED|Access to this API has been restricted/);
    await expect(
      create({ tools: [fixture('process-tier/write-file-at.ts')], permissions: { fsWrite: [tmpdir()] } }),
    ).rejects.toThrow(/permissions.fsWrite .* reaches into toolpool's cache/);
  });
});

describe('process tier: the memory cap on this line', () => {
  test("Node's own reservation is measured, and a tool's Buffers get about maxMemoryMb: half fits, 2.5 times is over the cap", async () => {
    const reservation = await nodeReservation();
    console.log(
      `Node ${process.version}: idle VmData ${reservation.baseMb} MB, +${reservation.perWorkerMb} MB per worker`,
    );
    expect(reservation.baseMb).toBeGreaterThan(10);
    // One worker per child: the cap then holds no share of a worker the child never started (on Node 26 that
    // share is ~76 MB, enough for a 256 MB Buffer to fit under a 128 MB limit beside the 80 MB of slack).
    const executor = await createExecutor({
      tools: [fixture('process-tier/buffer-alloc.ts'), fixture('probe.ts')],
      limits: { maxMemoryMb: 128 },
      workers: { min: 1, max: 1 },
    });
    const { results } = await executor.executeBatch([call('1', 'buffer_alloc', { mb: 64 })]);
    expect(textOf(results[0]!)).toBe('allocated 64 MB');
    // The cap has room for the worker's full heap (128 MB, 16 MB of young generation and the 16 MB Node lets a
    // worker past its limit) and 80 MB of the child's own slack: an idle heap leaves about 240 MB that a Buffer can
    // take, so 256 MB fitted at times on Node 22. 320 MB is over the cap whatever the child itself uses.
    // Three rounds: the call after a bomb gets its own 32 MB. (Before the child had one malloc arena, the stopped
    // worker's freed memory stayed in its thread's arena, the replacement could not compile the tool, and the next call
    // failed as "memory limit" in about a third of the rounds beside a CPU burner on Node 26.)
    for (let round = 0; round < 3; round++) {
      const bomb = await executor.executeBatch([
        call('2', 'buffer_alloc', { mb: 320 }),
        call('3', 'probe', { action: 'ok' }),
      ]);
      expect(bomb.results[0]!.isError).toBe(true);
      expect(textOf(bomb.results[0]!)).toMatch(/memory limit \(maxMemoryMb: 128 MB\)/);
      expect(textOf(bomb.results[1]!)).toBe('ok');
      const next = await executor.executeBatch([call('4', 'buffer_alloc', { mb: 32 })]);
      expect(textOf(next.results[0]!), `round ${round}`).toBe('allocated 32 MB');
    }
  }, 60_000);

  test('a child V8 aborts for memory (its report on stderr, then SIGABRT) is named as the memory limit, five times over', async () => {
    // Node's docs: at 'exit' a child's stdio may still be open, so the verdict waits for the end of stderr. (This
    // machine read the report before the exit every time; the sandbox's twin of this case failed before the fix.)
    const executor = await createExecutor({
      tools: [fixture('process-tier/v8-abort.ts'), fixture('probe.ts')],
      limits: { maxMemoryMb: 128 },
      workers: { min: 1, max: 1 },
    });
    try {
      for (let round = 0; round < 5; round++) {
        const { results } = await executor.executeBatch([call(`abort-${round}`, 'v8_abort', {})]);
        expect(results[0]).toMatchObject({ isError: true, errorCode: 'MEMORY_LIMIT' });
        expect(textOf(results[0]!)).toMatch(/memory limit \(maxMemoryMb: 128 MB\)/);
      }
      const next = await executor.executeBatch([call('next', 'probe', { action: 'ok' })]);
      expect(textOf(next.results[0]!)).toBe('ok');
    } finally {
      await executor.close();
    }
    // Each round starts a new child (its worker imports the tools from TypeScript): seconds apiece on a loaded machine.
  }, 120_000);
});

describe('permissions per line', () => {
  test('the worker tier takes the permission flags on this line (so module tools are never run unrestricted)', () => {
    const support = permissionSupport();
    expect(support.perWorker).toBe(true);
    expect(support.stableFlag).toBe(process.allowedNodeEnvironmentFlags.has('--permission'));
  });

  test('where workers refuse the flags, tools of the worker tier run restricted in the process tier', async () => {
    const tiers = new Tiers({
      minWorkers: 1,
      maxWorkers: 1,
      idleTimeoutMs: 1_000,
      loadTimeoutMs: 5_000,
      env: {},
      permissions: { fsRead: [scratch] },
      hostFunctions: {},
      defaultMemoryMb: 64,
      moduleFiles: [],
      permissionSupport: { ...permissionSupport(), perWorker: false },
    });
    try {
      expect(await tiers.get('worker')).toBeInstanceOf(ProcessTier);
      expect(await tiers.get('worker')).toBe(await tiers.get('process'));
    } finally {
      await tiers.close();
    }
  });

  // Only Node 25+ has a network permission; before it the next test shows the refusal instead.
  test.runIf(permissionSupport().net).each(['worker', 'process'] as const)(
    'Node 25+, %s tier: network denied under permissions unless net: true',
    async (isolation) => {
      const denied = await createExecutor({
        tools: [fixture('process-tier/connect.ts')],
        isolation,
        permissions: { fsRead: [scratch] },
      });
      const allowed = await createExecutor({
        tools: [fixture('process-tier/connect.ts')],
        isolation,
        permissions: { fsRead: [scratch], net: true },
      });
      const reach = async (executor: typeof denied) =>
        textOf((await executor.executeBatch([call('1', 'connect')])).results[0]!);
      expect(await reach(denied)).toBe('ERR_ACCESS_DENIED');
      expect(await reach(allowed)).toBe('ECONNREFUSED'); // reached the network; nothing listens on port 9
    },
  );

  // Node 25+ can enforce net: false; the test above shows it there.
  test.runIf(!permissionSupport().net)(
    'before Node 25: net: false cannot be enforced, so it is refused with what to do',
    async () => {
      await expect(create({ tools: [fixture('probe.ts')], permissions: { net: false } })).rejects.toThrow(
        /net: false cannot be enforced on Node v\d+.*Node 25 or later.*sandbox/,
      );
    },
  );

  test('a host:port list needs the sandbox tier', async () => {
    await expect(
      create({ tools: [fixture('probe.ts')], permissions: { net: ['api.example.com:443'] } }),
    ).rejects.toThrow(/permissions.net lists hosts, which only isolation "sandbox" can enforce/);
    await expect(create({ tools: [], permissions: { net: 'yes' as never } })).rejects.toThrow(
      /permissions.net must be true, false or an array of "host:port"/,
    );
  });
});

test('nothing is left running', async () => {
  expect(await eventually(childPids, (pids) => pids.length === 0)).toEqual([]);
});
