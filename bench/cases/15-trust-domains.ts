/**
 * Case 15: what trust domains cost (issue 20). Every tool module has a pool
 * of its own, started on first use and stopped when idle, and the pools
 * share one cap on threads. Measured here:
 *
 * - the first call of a module whose pool is not started (it was stopped
 *   after idleTimeoutMs), against a warm call plus one bare worker start;
 * - the memory of an idle module pool (one worker kept), from the RSS of
 *   this process before and after an executor of 10 modules;
 * - 10 modules x 100 calls, one domain per module, against the same 10
 *   modules put in one shared domain (`trustDomain`), both on 2 threads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { toolpool } from '../lib/toolpool.ts';
import { interleave, ratioOf } from '../lib/interleave.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

const ROWS = [
  'warm call, worker tier',
  'one bare worker start (new Worker to its first message)',
  'first call of a module whose pool is stopped',
  'idle module pool, memory',
  '10 modules x 100 calls, a domain each',
  '10 modules x 100 calls, one shared domain',
] as const;

const MODULES = 10;
const IDLE_MS = 300;

/** Ten trivial tool modules, each a file of its own (so each is a trust domain of its own). */
function writeModules(): { folder: string; files: string[] } {
  const folder = mkdtempSync(join(tmpdir(), 'toolpool-bench-domains-'));
  const files = Array.from({ length: MODULES }, (_, i) => {
    const file = join(folder, `tool-${i}.mjs`);
    writeFileSync(
      file,
      `export default { name: 'noop_${i}', description: 'Benchmark tool ${i}', parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },\n` +
        `  execute: ({ n }) => ({ content: [{ type: 'text', text: String(n) }] }) };\n`,
    );
    return file;
  });
  return { folder, files };
}

async function bareWorkerStart(): Promise<number> {
  const started = performance.now();
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage(1)", { eval: true });
  await new Promise((resolve) => worker.once('message', resolve));
  const ms = performance.now() - started;
  await worker.terminate();
  return ms;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const trustDomains: BenchCase = {
  id: 15,
  title: 'Trust domains: first call of a stopped module pool, idle pool memory, 10 modules x 100 calls',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const { folder, files } = writeModules();
    const rounds = quick ? 1 : 8;
    const callsPerModule = quick ? 10 : 100;
    try {
      // First call of a stopped pool, against a warm call and a bare worker start.
      const reaping = await createExecutor({
        tools: files.slice(0, 2),
        workers: { min: 1, max: 2, idleTimeoutMs: IDLE_MS },
      });
      const warm: number[] = [];
      const first: number[] = [];
      const starts: number[] = [];
      const call = (i: number, id: string) => reaping.executeBatch([{ id, name: `noop_${i}`, arguments: { n: 1 } }]);
      for (let round = 0; round < rounds + 1; round++) {
        await sleep(IDLE_MS * 3); // both pools stopped
        let t = performance.now();
        await call(1, `first${round}`);
        const firstMs = performance.now() - t;
        for (let i = 0; i < 20; i++) await call(1, `warmup${round}-${i}`);
        t = performance.now();
        for (let i = 0; i < 20; i++) await call(1, `warm${round}-${i}`);
        const warmMs = (performance.now() - t) / 20;
        const startMs = await bareWorkerStart();
        if (round === 0) continue; // the first round also pays for JIT and the compile cache
        first.push(firstMs);
        warm.push(warmMs);
        starts.push(startMs);
      }
      await reaping.close();

      // Memory of idle module pools: one worker each.
      const rssBefore = process.memoryUsage().rss;
      const idle = await createExecutor({ tools: files, workers: { min: 1, max: 2 } });
      await idle.executeBatch(files.map((_, i) => ({ id: `m${i}`, name: `noop_${i}`, arguments: { n: i } })));
      await sleep(200);
      const perPoolMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20 / MODULES;
      await idle.close();

      // 10 modules x 100 calls: a domain each, against one shared domain.
      const own = await createExecutor({ tools: files, workers: { min: 1, max: 2 } });
      const shared = await createExecutor({
        tools: files.map((module) => ({ module, trustDomain: 'bench-pack' })),
        workers: { min: 1, max: 2 },
      });
      const batch = files.map((_, i) => ({ id: `c${i}`, name: `noop_${i}`, arguments: { n: i } }));
      const block = (executor: typeof own) => async () => {
        const started = performance.now();
        for (let i = 0; i < callsPerModule; i++) await executor.executeBatch(batch);
        return [performance.now() - started];
      };
      log(`case 15: ${rounds} rounds of ${MODULES} x ${callsPerModule} calls per variant`);
      const result = await interleave({ own: block(own), shared: block(shared) }, { rounds, warmupRounds: 1 });
      await Promise.all([own.close(), shared.close()]);

      const s = {
        warm: summarize(warm),
        start: summarize(starts),
        first: summarize(first),
        own: summarize(result.own.samples),
        shared: summarize(result.shared.samples),
      };
      const firstBound = s.warm.median + s.start.median;
      const firstRatio = s.first.median / firstBound;
      const spread = ratioOf(result.own, result.shared);
      return {
        id: 15,
        title: trustDomains.title,
        rows: [
          row(ROWS[0], 'ms', s.warm.median, { n: s.warm.n }),
          row(ROWS[1], 'ms', s.start.median, { n: s.start.n }),
          row(ROWS[2], 'ms', s.first.median, {
            n: s.first.n,
            note: `${firstRatio.toFixed(2)}x a warm call plus one worker start`,
          }),
          row(ROWS[3], 'MB', perPoolMb, { note: 'RSS of this process, per module, one worker each' }),
          row(ROWS[4], 'ms', s.own.median, {
            n: s.own.n,
            vs: { row: ROWS[5], ratio: spread.value, range: spread.range },
          }),
          row(ROWS[5], 'ms', s.shared.median, { n: s.shared.n }),
        ],
        targets: [
          {
            name: 'first call of a stopped module pool vs a warm call plus one worker start',
            measured: firstRatio,
            shown: `${firstRatio.toFixed(2)}x`,
            goal: '<= 2.00x',
            met: firstRatio <= 2,
          },
          {
            name: '10 modules x 100 calls, a domain each vs one shared domain',
            measured: spread.value,
            shown: `${spread.value.toFixed(2)}x`,
            goal: '<= 1.20x',
            met: spread.value <= 1.2,
          },
        ],
        notes: [],
      };
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },
};
