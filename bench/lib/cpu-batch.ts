/**
 * The CPU-heavy batches, shared by case 3 (wall time), case 4 (event-loop
 * delay) and case 10 (pi-agent-core): one set of interleaved rounds in
 * which every runner executes the same batch of tools/hash.ts calls.
 *
 *   toolpool  the hash tool as a module, in toolpool's workers (one per core)
 *   inline    the same tool inline: every call on the event loop, as in-process executors run tools
 *   raw       the same execute in raw piscina, same worker count
 *   pi        pi-agent-core's agent loop running the same execute in process
 *   idle      nothing: the event loop's own delay over a span as long as toolpool's batch
 */
import type { Executor } from '../../src/index.ts';
import { toolpool as loadToolpool } from './toolpool.ts';
import hashTool from '../../tools/hash.ts';
import { calibrateHash, type HashWork } from './hash-work.ts';
import { sleep } from './clock.ts';
import { watchEventLoop, type LoopDelay } from './event-loop.ts';
import { CORES, RawPool, TOOLS, calls } from './fixtures.ts';
import { interleave, type VariantSamples } from './interleave.ts';
import { median } from './stats.ts';
import { piPeer } from './pi.ts';
import { shared, type BenchContext } from './types.ts';

export type CpuRunner = 'toolpool' | 'inline' | 'raw' | 'pi';
export type CpuVariant = CpuRunner | 'idle';

export interface CpuBatchSize {
  size: number;
  /** Wall time (ms) of each batch, per runner. */
  wall: Record<CpuRunner, VariantSamples>;
  /** Event-loop delay of each measured batch, per variant. */
  delay: Record<CpuVariant, LoopDelay[]>;
}

export interface CpuBatches {
  work: HashWork;
  workers: number;
  rounds: number;
  sizes: CpuBatchSize[];
}

export function cpuBatches(ctx: BenchContext): Promise<CpuBatches> {
  return shared(ctx, 'cpu-batches', () => measure(ctx));
}

async function measure({ quick, log }: BenchContext): Promise<CpuBatches> {
  const { createExecutor } = await loadToolpool();
  const work = await calibrateHash(quick ? 5 : 250);
  const rounds = quick ? 1 : 5;
  const sizes = quick ? [4] : [4, 8];
  log(
    `cpu batches: ${work.args.rounds} hash rounds per call (~${work.measuredMs.toFixed(0)} ms on the main thread), sizes ${sizes.join(', ')}, ${rounds} rounds, ${CORES} workers`,
  );
  const listener = () => undefined;
  const toolpool = await createExecutor({ tools: [TOOLS.hash], workers: { min: CORES, max: CORES } });
  const inline = await createExecutor({ tools: [hashTool] });
  const executors: Executor[] = [toolpool, inline];
  // Every runner has one (empty) event listener: pi-agent-core always emits its events.
  for (const executor of executors) executor.subscribe(listener);
  const raw = new RawPool(CORES);
  const pi = (await piPeer()).harness(['hash']);
  try {
    const module = await raw.module(TOOLS.hash);
    // Warm every runner once (worker start, module load, JIT) with a small batch.
    const small = { ...work.args, rounds: Math.max(100, Math.round(work.args.rounds / 50)) };
    const warm = calls(CORES, 'hash', small, 'w');
    await toolpool.executeBatch(warm);
    await inline.executeBatch(warm);
    await Promise.all(warm.map(() => raw.run(module, small)));
    await pi.batch(warm);

    const results: CpuBatchSize[] = [];
    for (const size of sizes) {
      const batch = calls(size, 'hash', work.args);
      const delay: Record<CpuVariant, LoopDelay[]> = { toolpool: [], inline: [], raw: [], pi: [], idle: [] };
      let idleMs = (work.measuredMs * size) / CORES;
      /** Wall time (ms) of one batch, with the event loop watched over exactly that span. */
      const timed =
        (variant: CpuVariant, run: () => Promise<unknown>) =>
        async ({ warmup }: { warmup: boolean }) => {
          const watch = await watchEventLoop();
          const start = process.hrtime.bigint();
          await run();
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          const loop = await watch.stop();
          if (!warmup) delay[variant].push(loop);
          return [ms];
        };
      const wall = await interleave(
        {
          toolpool: async (round) => {
            const samples = await timed('toolpool', () => toolpool.executeBatch(batch))(round);
            idleMs = samples[0]!;
            return samples;
          },
          inline: timed('inline', () => inline.executeBatch(batch)),
          raw: timed('raw', () => Promise.all(batch.map(() => raw.run(module, work.args)))),
          idle: timed('idle', () => sleep(idleMs)),
          // pi's span is its loop's tool step, timed inside the loop; the event loop is watched over the same span.
          pi: async ({ warmup }) => {
            let watch: Awaited<ReturnType<typeof watchEventLoop>> | undefined;
            const { ns } = await pi.batch(batch, {
              before: async () => (watch = await watchEventLoop()),
              after: async () => {
                const loop = await watch!.stop();
                if (!warmup) delay.pi.push(loop);
              },
            });
            return [ns / 1e6];
          },
        },
        { rounds, warmupRounds: 0 }, // the small batch above was the warm-up
      );
      const { idle: _idle, ...runners } = wall;
      results.push({ size, wall: runners, delay });
      log(
        `cpu batch of ${size}: ` +
          Object.entries(runners)
            .map(([name, v]) => `${name} ${median(v.samples).toFixed(0)} ms`)
            .join(', '),
      );
    }
    return { work, workers: CORES, rounds, sizes: results };
  } finally {
    await Promise.all([toolpool.close(), inline.close(), raw.close()]);
  }
}
