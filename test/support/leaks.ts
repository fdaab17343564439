import { readdirSync, readFileSync } from 'node:fs';

/**
 * OS threads of this process (worker threads are among them), without
 * libuv's thread pool: from Node 22 on it starts lazily, at the first async
 * fs or crypto call, so its four threads would count as a leak of whichever
 * test ran first.
 */
export function threadCount(): number {
  return readdirSync('/proc/self/task').filter((task) => threadName(task) !== 'libuv-worker').length;
}

function threadName(task: string): string {
  try {
    return readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
  } catch {
    return ''; // the thread ended while we looked
  }
}

/** Process tier children of this process (esbuild's own service process is not one). */
export function childPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid ..." — comm may contain spaces, so split after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === process.pid && command.includes('process-child')) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Processes of this machine (but this one) whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Waits until `check` holds, polling; returns its last value. */
export async function eventually<T>(read: () => T, check: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let value = read();
  while (!check(value) && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = read();
  }
  return value;
}
