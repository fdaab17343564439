/**
 * Case 10: the peer, pi-agent-core (its agent loop, a scripted model, tools
 * in process): `@earendil-works/pi-agent-core` 1.x on Node 22.19+, the old
 * `@mariozechner/pi-agent-core` 0.73 on Node 20 (bench/lib/pi.ts). The
 * result's notes name the one measured. Trivial tool: the loop's tool step for one call vs
 * toolpool's executeBatch of one call, inline and in a worker, every
 * runner with one empty event listener. CPU-heavy: the batch of 4 from
 * case 3's rounds, wall time and event-loop delay.
 */
import { toolpool } from '../lib/toolpool.ts';
import noop from '../tools/noop.ts';
import { cpuBatches } from '../lib/cpu-batch.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { interleave, ratioOf, timeEach } from '../lib/interleave.ts';
import { piPeer } from '../lib/pi.ts';
import { median, summarize } from '../lib/stats.ts';
import { row, type BenchCase, type Row } from '../lib/types.ts';

const ROWS = [
  'trivial call: pi-agent-core tool step',
  'trivial call: toolpool inline',
  'trivial call: toolpool worker',
  'batch of 4 hash calls: pi-agent-core',
  'batch of 4 hash calls: toolpool workers',
  'batch of 4: pi-agent-core, delay p99',
  'batch of 4: toolpool workers, delay p99',
] as const;

export const piAgentCore: BenchCase = {
  id: 10,
  title: 'pi-agent-core vs toolpool',
  rowNames: ROWS,
  async run(ctx) {
    const { quick, log } = ctx;
    const { createExecutor } = await toolpool();
    const rounds = quick ? 1 : 20;
    const perBlock = quick ? 20 : 300;
    const listener = () => undefined;
    const inline = await createExecutor({ tools: [noop] });
    const worker = await createExecutor({ tools: [TOOLS.noop], workers: { min: 1, max: 1 } });
    inline.subscribe(listener);
    worker.subscribe(listener);
    const peer = await piPeer();
    const pi = peer.harness(['noop']);
    const call = [toolCall('c1', 'noop', { n: 1 })];
    let trivial;
    try {
      log(`case 10: ${rounds} rounds x ${perBlock} trivial calls per runner`);
      trivial = await interleave(
        {
          pi: async () => {
            const samples: number[] = [];
            for (let i = 0; i < perBlock; i++) samples.push((await pi.batch(call)).ns / 1e3);
            return samples;
          },
          inline: () => timeEach(perBlock, () => inline.executeBatch(call)),
          worker: () => timeEach(perBlock, () => worker.executeBatch(call)),
        },
        { rounds, warmupRounds: 1 },
      );
    } finally {
      await Promise.all([inline.close(), worker.close()]);
    }
    const s = {
      pi: summarize(trivial.pi.samples),
      inline: summarize(trivial.inline.samples),
      worker: summarize(trivial.worker.samples),
    };
    const inlineVsPi = ratioOf(trivial.inline, trivial.pi);
    const workerVsPi = ratioOf(trivial.worker, trivial.pi);

    const batch4 = (await cpuBatches(ctx)).sizes.find((size) => size.size === 4)!;
    const wall = { pi: summarize(batch4.wall.pi.samples), toolpool: summarize(batch4.wall.toolpool.samples) };
    const wallRatio = ratioOf(batch4.wall.toolpool, batch4.wall.pi);
    const p99 = (variant: 'pi' | 'toolpool' | 'idle') => median(batch4.delay[variant].map((d) => d.p99Ms));
    const rows: Row[] = [
      row(ROWS[0], 'µs', s.pi.median, { p99: s.pi.p99, n: s.pi.n, note: 'message_end → turn_end of the loop' }),
      row(ROWS[1], 'µs', s.inline.median, {
        p99: s.inline.p99,
        n: s.inline.n,
        vs: { row: ROWS[0], ratio: inlineVsPi.value, range: inlineVsPi.range },
      }),
      row(ROWS[2], 'µs', s.worker.median, {
        p99: s.worker.p99,
        n: s.worker.n,
        vs: { row: ROWS[0], ratio: workerVsPi.value, range: workerVsPi.range },
      }),
      row(ROWS[3], 'ms', wall.pi.median, { n: wall.pi.n, note: 'all 4 on the event loop' }),
      row(ROWS[4], 'ms', wall.toolpool.median, {
        n: wall.toolpool.n,
        vs: { row: ROWS[3], ratio: wallRatio.value, range: wallRatio.range },
      }),
      row(ROWS[5], 'ms', p99('pi'), {
        n: batch4.delay.pi.length,
        note: `max ${Math.max(...batch4.delay.pi.map((d) => d.maxMs)).toFixed(0)} ms`,
      }),
      row(ROWS[6], 'ms', p99('toolpool'), {
        n: batch4.delay.toolpool.length,
        note: `idle loop ${p99('idle').toFixed(2)} ms`,
      }),
    ];
    return {
      id: 10,
      title: piAgentCore.title,
      rows,
      targets: [
        {
          name: 'Inline trivial call vs pi-agent-core’s in-process tool step',
          measured: inlineVsPi.value,
          shown: `${inlineVsPi.value.toFixed(2)}x`,
          goal: '<= 1.00x',
          met: inlineVsPi.value <= 1,
        },
      ],
      notes: [`Peer: ${peer.name} (Node ${process.versions.node}).`],
    };
  },
};
