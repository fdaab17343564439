/**
 * CPU time and context switches of processes, read from /proc (Linux):
 * per thread run time from /proc/<pid>/task/<tid>/schedstat (nanoseconds),
 * utime + stime of /proc/<pid>/stat (clock ticks) as a cross-check. CPU
 * time moves far less with the machine's load than wall-clock time, so the
 * profiles (bench/profile/) read it around their measured calls.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Usage {
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
export function descendants(): number[] {
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

export function usageOf(pids: number[]): Usage {
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

export const diff = (a: Usage, b: Usage): Usage => ({
  runNs: b.runNs - a.runNs,
  threads: new Map([...b.threads].map(([name, ns]) => [name, ns - (a.threads.get(name) ?? 0)])),
  ticks: b.ticks - a.ticks,
  voluntary: b.voluntary - a.voluntary,
  involuntary: b.involuntary - a.involuntary,
});

/** The process's command name (/proc/<pid>/comm), e.g. `redis-server` or `node`. */
export function commandOf(pid: number): string {
  return readOr(`/proc/${pid}/comm`).trim();
}
