/**
 * Case 6: crash recovery. A tool ends its worker (process.exit); the call
 * becomes an error result and the very next call must succeed. Measured:
 * the crashing call itself, and the time from its result to the next
 * successful result, with one worker (the next call waits for a
 * replacement worker) and with two (the other worker takes it).
 */
import type { Executor } from '../../src/index.ts';
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, calls, toolCall } from '../lib/fixtures.ts';
import { interleave } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  '1 worker: crashing call',
  '1 worker: crash → next success',
  '2 workers: crashing call',
  '2 workers: crash → next success',
] as const;

export const crashRecovery: BenchCase = {
  id: 6,
  title: 'Crash recovery',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 8;
    const one = await createExecutor({ tools: [TOOLS.noop, TOOLS.crash, TOOLS.sleep], workers: { min: 1, max: 1 } });
    const two = await createExecutor({ tools: [TOOLS.noop, TOOLS.crash, TOOLS.sleep], workers: { min: 2, max: 2 } });
    const crashMs: Record<'one' | 'two', number[]> = { one: [], two: [] };
    try {
      // Load the tools in both workers of the 2-worker pool (two sleeps run on two workers).
      await two.executeBatch([...calls(2, 'sleep', { ms: 20 }), ...calls(2, 'noop', { n: 1 }, 'n')]);
      await one.executeBatch([toolCall('n', 'noop', { n: 1 })]);
      /** One sample: crash result → next success (ms); the crash call's own time is kept aside. */
      const crashThenCall =
        (executor: Executor, key: 'one' | 'two') =>
        async ({ warmup }: { warmup: boolean }) => {
          const start = process.hrtime.bigint();
          const crashed = await executor.executeBatch([toolCall('crash', 'crash', {})]);
          const crashedAt = process.hrtime.bigint();
          const next = await executor.executeBatch([toolCall('next', 'noop', { n: 1 })]);
          const end = process.hrtime.bigint();
          if (!crashed.results[0]!.isError || next.results[0]!.isError)
            throw new Error('case 6: expected an error result, then a success');
          if (!warmup) crashMs[key].push(Number(crashedAt - start) / 1e6);
          return [Number(end - crashedAt) / 1e6];
        };
      log(`case 6: ${rounds} crashes per pool size`);
      const result = await interleave(
        { one: crashThenCall(one, 'one'), two: crashThenCall(two, 'two') },
        { rounds, warmupRounds: quick ? 0 : 1 },
      );
      const s = {
        one: summarize(result.one.samples),
        two: summarize(result.two.samples),
        crashOne: summarize(crashMs.one),
        crashTwo: summarize(crashMs.two),
      };
      return {
        id: 6,
        title: crashRecovery.title,
        rows: [
          row(ROWS[0], 'ms', s.crashOne.median, { n: s.crashOne.n, note: 'process.exit in the tool → error result' }),
          row(ROWS[1], 'ms', s.one.median, { n: s.one.n, note: 'waits for a replacement worker' }),
          row(ROWS[2], 'ms', s.crashTwo.median, { n: s.crashTwo.n }),
          row(ROWS[3], 'ms', s.two.median, { n: s.two.n, note: 'the other worker takes the call' }),
        ],
        targets: [],
        notes: [],
      };
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  },
};
