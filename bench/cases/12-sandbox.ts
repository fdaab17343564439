/**
 * Case 12: the sandbox tier (issue 11) against the process tier it wraps:
 * cold start (a new executor to its first result, which starts the child:
 * inside bubblewrap, or plain) and the per-call overhead of a warm child,
 * one trivial call at a time. Interleaved rounds; ratios are medians over
 * the same rounds.
 *
 * Walls' price (issue 27): the same warm call in the worker tier (the
 * default) is the anchor of the process tier and of the sandbox tier (what
 * the walls page points untrusted code to).
 */
import { execFile } from 'node:child_process';
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'process tier: cold start to first result',
  'sandbox tier: cold start to first result',
  'process tier: warm call',
  'sandbox tier: warm call',
  'bare bwrap running true (the namespaces only)',
  'worker tier: warm call',
] as const;

/** A bubblewrap that makes the namespaces and runs `true`: the floor any sandbox start pays. */
function bareBwrap(): Promise<number[]> {
  const start = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      'bwrap',
      ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'],
      (error) =>
        error
          ? reject(new Error(`case 12: bare bwrap failed: ${error.message}`))
          : resolve([performance.now() - start]),
    ),
  );
}

type Tier = 'process' | 'sandbox';

export const sandboxTier: BenchCase = {
  id: 12,
  title: 'Sandbox tier vs process tier: cold start and warm per-call overhead; walls vs the worker tier',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const call = [toolCall('c1', 'noop', { n: 1 })];
    const open = (isolation: Tier | 'worker') =>
      createExecutor({ tools: [TOOLS.noop], isolation, workers: { min: 1, max: 1 } });

    const coldRounds = quick ? 1 : 8;
    log(`case 12: ${coldRounds} cold starts per tier`);
    const coldStart = (isolation: Tier) => async () => {
      const start = performance.now();
      const executor = await open(isolation);
      await executor.executeBatch(call);
      const ms = performance.now() - start;
      await executor.close();
      return [ms];
    };
    const cold = await interleave(
      { process: coldStart('process'), sandbox: coldStart('sandbox'), bwrap: bareBwrap },
      { rounds: coldRounds, warmupRounds: 1 },
    );

    const rounds = quick ? 1 : 20;
    const perBlock = quick ? 20 : 300;
    log(`case 12: ${rounds} rounds x ${perBlock} warm calls per tier`);
    const executors = {
      worker: await open('worker'),
      process: await open('process'),
      sandbox: await open('sandbox'),
    };
    let warm;
    try {
      warm = await interleave(
        {
          worker: () => timeEach(perBlock, () => executors.worker.executeBatch(call)),
          process: () => timeEach(perBlock, () => executors.process.executeBatch(call)),
          sandbox: () => timeEach(perBlock, () => executors.sandbox.executeBatch(call)),
        },
        { rounds, warmupRounds: 1 },
      );
    } finally {
      await Promise.all(Object.values(executors).map((executor) => executor.close()));
    }

    const coldRatio = ratioOf(cold.sandbox, cold.process);
    const warmRatio = ratioOf(warm.sandbox, warm.process);
    const walls = {
      process: ratioOf(warm.process, warm.worker),
      sandbox: ratioOf(warm.sandbox, warm.worker),
    };
    const s = {
      coldProcess: summarize(cold.process.samples),
      coldSandbox: summarize(cold.sandbox.samples),
      warmProcess: summarize(warm.process.samples),
      warmSandbox: summarize(warm.sandbox.samples),
      bwrap: summarize(cold.bwrap.samples),
      warmWorker: summarize(warm.worker.samples),
    };
    return {
      id: 12,
      title: sandboxTier.title,
      rows: [
        row(ROWS[0], 'ms', s.coldProcess.median, {
          n: s.coldProcess.n,
          note: 'createExecutor (1 JS-compiled TS tool) + first call; starts prlimit + node',
        }),
        row(ROWS[1], 'ms', s.coldSandbox.median, {
          n: s.coldSandbox.n,
          vs: { row: ROWS[0], ratio: coldRatio.value, range: coldRatio.range },
          note: 'the same inside bwrap (bwrap probed once per process, before the first round)',
        }),
        row(ROWS[5], 'µs', s.warmWorker.median, {
          p99: s.warmWorker.p99,
          n: s.warmWorker.n,
          note: 'the anchor of the walls: executeBatch of a noop tool, worker already running',
        }),
        row(ROWS[2], 'µs', s.warmProcess.median, {
          p99: s.warmProcess.p99,
          n: s.warmProcess.n,
          vs: { row: ROWS[5], ratio: walls.process.value, range: walls.process.range },
          note: 'executeBatch of a noop tool, child already running',
        }),
        row(ROWS[3], 'µs', s.warmSandbox.median, {
          p99: s.warmSandbox.p99,
          n: s.warmSandbox.n,
          vs: { row: ROWS[5], ratio: walls.sandbox.value, range: walls.sandbox.range },
          note: `${warmRatio.value.toFixed(2)}x the process tier's (rounds ${warmRatio.range.map((r) => r.toFixed(2)).join('–')})`,
        }),
        row(ROWS[4], 'ms', s.bwrap.median, {
          n: s.bwrap.n,
          note: `--unshare-all, / read-only; the sandbox's cold start is ${(s.coldSandbox.median / s.bwrap.median).toFixed(1)}x this`,
        }),
      ],
      targets: [
        {
          name: 'Warm sandbox call vs warm process-tier call',
          measured: warmRatio.value,
          shown: `${warmRatio.value.toFixed(2)}x`,
          goal: '<= 1.50x',
          met: warmRatio.value <= 1.5,
        },
        ...(
          [
            ['Warm process-tier call vs warm worker-tier call', walls.process],
            ['Warm sandbox call vs warm worker-tier call', walls.sandbox],
          ] as const
        ).map(([name, ratio]) => ({
          name,
          measured: ratio.value,
          shown: `${ratio.value.toFixed(2)}x`,
          goal: '<= 2.00x',
          met: ratio.value <= 2,
        })),
      ],
      notes: [],
    };
  },
};
