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
import { readdirSync, readFileSync } from 'node:fs';
import { toolpool } from '../lib/toolpool.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';

const calls = Number(process.argv[2] ?? 2000);
const tiers = (process.argv[3] ?? 'worker,process,sandbox').split(',') as Array<'worker' | 'process' | 'sandbox'>;
const TICK_US = 10_000; // USER_HZ = 100
/** Calls before the measured ones: V8 optimizes the hot path meanwhile (its compiler threads' CPU would count otherwise). */
const warmup = Number(process.env.WALLS_WARMUP ?? 2000);

interface Usage {
  runNs: number;
  /** Run time per thread, keyed `pid/tid name`. */
  threads: Map<string, number>;
  ticks: number;
  voluntary: number;
  involuntary: number;
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Every process whose parent chain leads to this one. */
function descendants(): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readOr(`/proc/${entry}/stat`);
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(Number(entry), ppid);
  }
  const out: number[] = [];
  for (const pid of parents.keys()) {
    let p = parents.get(pid);
    while (p !== undefined && p > 1) {
      if (p === process.pid) {
        out.push(pid);
        break;
      }
      p = parents.get(p);
    }
  }
  return out.sort((a, b) => a - b);
}

function usageOf(pids: number[]): Usage {
  const usage: Usage = { runNs: 0, threads: new Map(), ticks: 0, voluntary: 0, involuntary: 0 };
  for (const pid of pids) {
    const stat = readOr(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    usage.ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {}
    for (const tid of tids) {
      const ns = Number(readOr(`/proc/${pid}/task/${tid}/schedstat`).split(' ')[0] ?? 0);
      usage.runNs += ns;
      const status = readOr(`/proc/${pid}/task/${tid}/status`);
      usage.threads.set(`${pid}/${tid} ${/Name:\s+(.*)/.exec(status)?.[1] ?? '?'}`, ns);
      usage.voluntary += Number(/\nvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      usage.involuntary += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
  }
  return usage;
}

const diff = (a: Usage, b: Usage): Usage => ({
  runNs: b.runNs - a.runNs,
  threads: new Map([...b.threads].map(([name, ns]) => [name, ns - (a.threads.get(name) ?? 0)])),
  ticks: b.ticks - a.ticks,
  voluntary: b.voluntary - a.voluntary,
  involuntary: b.involuntary - a.involuntary,
});

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
