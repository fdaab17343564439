/**
 * Case 19: what a ledger costs per call (issue 25). One inline noop tool (on
 * the host thread, so the ledger's share is not hidden by a worker round
 * trip), one call per batch, one batch at a time: without a runId (not
 * recorded), and keyed with memoryLedger, sqliteLedger (a file in a temp
 * folder; Node 22.13+) and redisLedger (a redis-server of the case's own).
 * Every keyed call has a new id, so each pays a claim and an end.
 *
 * The memory ledger once more, full: every call past its bound forgets the
 * oldest ended key, which must not cost more than a call below it.
 *
 * The same pair again for a worker-tier noop (bench/tools/noop.ts, one
 * worker): what the memory ledger adds to the call most users make.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Executor, Ledger } from '../../src/index.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { startRedis } from '../lib/redis-server.ts';
import { summarize } from '../lib/stats.ts';
import { TOOLS } from '../lib/fixtures.ts';
import { load, toolpool } from '../lib/toolpool.ts';
import { row, type BenchCase, type Row, type Target } from '../lib/types.ts';

type Bullmq = typeof import('../../src/adapters/bullmq/index.ts');

const ROWS = ['no ledger (no runId)', 'memoryLedger', 'sqliteLedger', 'redisLedger'] as const;
const WORKER_ROWS = ['worker-tier noop, no ledger', 'worker-tier noop, memoryLedger'] as const;
const FULL_ROW = 'memoryLedger at its bound (150,000 keys ended, 100,000 kept)';
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
/** node:sqlite without a flag: Node 22.13+, 23.4+. Without it the case has no SQLite row. */
const HAS_SQLITE = (major === 22 && minor >= 13) || (major === 23 && minor >= 4) || major >= 24;

/** The ledger after `keys` calls that claimed and ended (its default bound is 100,000 keys). */
async function filled(ledger: Ledger, keys: number): Promise<Ledger> {
  const start = { toolName: 'noop', argsDigest: '', startedAt: Date.now(), startedBy: 'bench' };
  for (let i = 0; i < keys; i++) {
    const key = { runId: 'fill', callId: `f${i}` };
    await ledger.claim(key, start);
    await ledger.end(key, { endedAt: Date.now(), isError: false, result: { content: [] } });
  }
  return ledger;
}

export const ledgerCost: BenchCase = {
  id: 19,
  title: 'Ledger cost per call (inline noop, one call per batch)',
  rowNames: [...(HAS_SQLITE ? ROWS : ROWS.filter((name) => name !== 'sqliteLedger')), FULL_ROW, ...WORKER_ROWS],
  async run({ quick, log }) {
    const { createExecutor, defineTool, memoryLedger, sqliteLedger } = await toolpool();
    const { redisLedger } = await load<Bullmq>('src/adapters/bullmq/index.ts');
    const noop = defineTool({
      name: 'noop',
      description: 'Does nothing',
      parameters: { type: 'object', properties: {} },
      execute: () => ({ content: [] }),
    });
    const folder = await mkdtemp(join(tmpdir(), 'toolpool-bench-ledger-'));
    const redis = await startRedis();
    const ledgers: Ledger[] = [];
    const executors: Executor[] = [];
    const notes: string[] = [];
    try {
      /** `inWorker`: the worker-tier noop on one worker; otherwise the inline noop. */
      const open = async (ledger?: Ledger, inWorker = false) => {
        if (ledger) ledgers.push(ledger);
        const executor = await createExecutor({
          ...(inWorker ? { tools: [TOOLS.noop], workers: { min: 1, max: 1 } } : { tools: [noop] }),
          ...(ledger ? { ledger } : {}),
        });
        executors.push(executor);
        return executor;
      };
      const sqlite = HAS_SQLITE ? sqliteLedger(join(folder, 'calls.db')) : undefined;
      if (!sqlite) notes.push(`sqliteLedger not measured: Node ${process.versions.node} has no node:sqlite (22.13+).`);
      const executors4 = {
        none: await open(),
        memory: await open(memoryLedger()),
        ...(sqlite ? { sqlite: await open(sqlite) } : {}),
        redis: await open(redisLedger({ connection: redis.url })),
        memoryFull: await open(await filled(memoryLedger(), 150_000)),
        workerNone: await open(undefined, true),
        workerMemory: await open(memoryLedger(), true),
      } as Record<
        'none' | 'memory' | 'sqlite' | 'redis' | 'memoryFull' | 'workerNone' | 'workerMemory',
        Executor | undefined
      >;
      const rounds = quick ? 1 : 10;
      const perBlock = quick ? 10 : 300;
      log(`case 19: ${rounds} rounds x ${perBlock} calls per ledger`);
      let n = 0;
      const block = (executor: Executor, keyed: boolean, args: Record<string, unknown>) => () =>
        timeEach(perBlock, () =>
          executor.executeBatch([{ id: `c${++n}`, name: 'noop', arguments: args }], keyed ? { runId: 'bench' } : {}),
        );
      const variants = Object.fromEntries(
        Object.entries(executors4)
          .filter((entry): entry is [string, Executor] => entry[1] !== undefined)
          .map(([name, executor]) => [
            name,
            block(executor, name !== 'none' && name !== 'workerNone', name.startsWith('worker') ? { n: 1 } : {}),
          ]),
      );
      const samples = await interleave(variants, { rounds, warmupRounds: 1 });
      const none = summarize(samples.none!.samples);
      const rows: Row[] = [
        row(ROWS[0], 'µs', none.median, { p99: none.p99, n: none.n, note: 'executeBatch of one inline noop call' }),
      ];
      for (const [name, title] of [
        ['memory', ROWS[1]],
        ['sqlite', ROWS[2]],
        ['redis', ROWS[3]],
      ] as const) {
        const measured = samples[name];
        if (!measured) continue;
        const s = summarize(measured.samples);
        const ratio = ratioOf(measured, samples.none!);
        rows.push(
          row(title, 'µs', s.median, {
            p99: s.p99,
            n: s.n,
            vs: { row: ROWS[0], ratio: ratio.value, range: ratio.range },
            note:
              name === 'sqlite'
                ? 'WAL, synchronous=FULL: a claim and an end per call'
                : name === 'redis'
                  ? 'SET NX PX, GET + SET KEEPTTL per call; local redis-server'
                  : undefined,
          }),
        );
      }
      const full = summarize(samples.memoryFull!.samples);
      const fullRatio = ratioOf(samples.memoryFull!, samples.memory!);
      rows.push(
        row(FULL_ROW, 'µs', full.median, {
          p99: full.p99,
          n: full.n,
          vs: { row: ROWS[1], ratio: fullRatio.value, range: fullRatio.range },
          note: 'each call forgets the oldest ended key',
        }),
      );
      const workerNone = summarize(samples.workerNone!.samples);
      const workerMemory = summarize(samples.workerMemory!.samples);
      const workerRatio = ratioOf(samples.workerMemory!, samples.workerNone!);
      rows.push(
        row(WORKER_ROWS[0], 'µs', workerNone.median, {
          p99: workerNone.p99,
          n: workerNone.n,
          note: 'executeBatch of one worker-tier noop call, 1 worker',
        }),
        row(WORKER_ROWS[1], 'µs', workerMemory.median, {
          p99: workerMemory.p99,
          n: workerMemory.n,
          vs: { row: WORKER_ROWS[0], ratio: workerRatio.value, range: workerRatio.range },
          // No target: on a VM the pair's ratio follows which vCPUs the two threads wake on (bench/profile/wake-cost.ts).
          note: 'a thread hop each; the ratio moves with the machine (see BENCHMARKS.md)',
        }),
      );
      // Issue 27: the memory ledger within 5% of none; SQLite and Redis as a stated price per call.
      const targets: Target[] = [];
      if (samples.memory) {
        const memory = ratioOf(samples.memory, samples.none!);
        targets.push({
          name: 'memoryLedger per call vs no ledger',
          measured: memory.value,
          shown: `${memory.value.toFixed(2)}x`,
          goal: '<= 1.05x',
          met: memory.value <= 1.05,
        });
      }
      for (const [name, title] of [
        ['sqlite', 'sqliteLedger'],
        ['redis', 'redisLedger'],
      ] as const) {
        const measured = samples[name];
        if (!measured) continue;
        const added = summarize(measured.samples).median - none.median;
        targets.push({
          name: `${title}: µs added per call over no ledger`,
          measured: added,
          shown: `${added.toFixed(0)} µs`,
          goal: 'stated',
          met: true,
        });
      }
      return { id: 19, title: ledgerCost.title, rows, targets, notes };
    } finally {
      await Promise.all(executors.map((executor) => executor.close()));
      await Promise.all(ledgers.map((ledger) => ledger.close?.()));
      await redis.stop();
      await rm(folder, { recursive: true, force: true });
    }
  },
};
