/**
 * Walls' price, per warm trivial call (not part of `npm run bench`): the
 * CPU time the host and the child processes spend, and their threads'
 * context switches, for the worker tier, the process tier and the sandbox
 * tier, one noop call at a time. CPU and switch counts move little with
 * the machine's load, unlike wall-clock times (which are printed too, for
 * scale only).
 *
 * Host CPU: process.cpuUsage() (every thread of the host). Child CPU: the
 * summed run time of every thread of every descendant process, from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds), and utime + stime from
 * /proc/<pid>/stat (clock ticks) as a cross-check. Switches: the
 * voluntary_ctxt_switches and nonvoluntary_ctxt_switches of every thread.
 *
 *   node --import tsx bench/profile/walls.ts [calls=2000] [tiers=worker,process,sandbox]
 *
 * With WALLS_STRACE=host or WALLS_STRACE=children, `strace -c -f` is
 * attached to those processes (every thread) for the measured calls and its
 * summary printed after them: syscalls per call are its counts / calls
 * (strace slows every syscall down: read its counts, not the times then).
 */
import { spawn } from 'node:child_process';
import { descendants, diff, usageOf, type Usage } from '../lib/proc-usage.ts';
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';

const calls = Number(process.argv[2] ?? 2000);
const tiers = (process.argv[3] ?? 'worker,process,sandbox').split(',') as Array<'worker' | 'process' | 'sandbox'>;
const TICK_US = 10_000; // USER_HZ = 100
/** Calls before the measured ones: V8 optimizes the hot path meanwhile (its compiler threads' CPU would count otherwise). */
const warmup = Number(process.env.WALLS_WARMUP ?? 2000);

const { createExecutor } = await toolpool();
const call = [toolCall('c1', 'noop', { n: 1 })];
for (const isolation of tiers) {
  const executor = await createExecutor({ tools: [TOOLS.noop], isolation, workers: { min: 1, max: 1 } });
  for (let i = 0; i < warmup; i++) await executor.executeBatch(call);
  const children = descendants();
  const traced = process.env.WALLS_STRACE === 'host' ? [process.pid] : process.env.WALLS_STRACE ? children : [];
  const strace =
    traced.length > 0
      ? spawn('strace', ['-c', '-f', ...traced.flatMap((pid) => ['-p', String(pid)])], {
          stdio: ['ignore', 'inherit', 'pipe'],
        })
      : undefined;
  let straceOut = '';
  strace?.stderr?.on('data', (chunk: Buffer) => (straceOut += chunk));
  if (strace) await new Promise((resolve) => setTimeout(resolve, 1000));
  const self = usageOf([process.pid]);
  const kids = usageOf(children);
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < calls; i++) await executor.executeBatch(call);
  const ms = performance.now() - start;
  const host = process.cpuUsage(cpu);
  const selfAfter = diff(self, usageOf([process.pid]));
  const kidsAfter = diff(kids, usageOf(children));
  if (strace) {
    const exited = new Promise((resolve) => strace.once('exit', resolve));
    strace.kill('SIGINT');
    await exited;
    console.log(`strace -c -f of ${process.env.WALLS_STRACE} during ${calls} calls:\n${straceOut}`);
  }
  const per = (n: number) => (n / calls).toFixed(1);
  console.log(
    `${isolation.padEnd(8)} host CPU ${per(host.user)} user + ${per(host.system)} sys µs/call` +
      ` (schedstat ${per(selfAfter.runNs / 1000)} µs); children CPU ${per(kidsAfter.runNs / 1000)} µs/call` +
      ` (utime+stime ${per(kidsAfter.ticks * TICK_US)} µs);` +
      ` switches host ${per(selfAfter.voluntary)}+${per(selfAfter.involuntary)},` +
      ` children ${per(kidsAfter.voluntary)}+${per(kidsAfter.involuntary)} (voluntary+involuntary)/call;` +
      ` wall ${per(ms * 1000)} µs/call [${children.length} child processes]`,
  );
  const busy = (usage: Usage) =>
    [...usage.threads]
      .filter(([, ns]) => ns / calls > 5_000)
      .sort((x, y) => y[1] - x[1])
      .map(([name, ns]) => `${name} ${per(ns / 1000)}`)
      .join(', ');
  console.log(`  host threads (µs/call): ${busy(selfAfter)}`);
  console.log(`  child threads (µs/call): ${busy(kidsAfter)}`);
  await executor.close();
}
process.exit(0);
