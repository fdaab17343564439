import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';

/** How a child process ended: an exit code, or the signal that killed it. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * How a child ended, with the signal named again when its launcher reports
 * a death by signal as exit code 128 + N (bubblewrap does, for the process
 * it runs).
 */
export function exitStatus(
  code: number | null,
  signal: NodeJS.Signals | null,
  signalsAsExitCodes: boolean,
): ExitStatus {
  if (signal || !signalsAsExitCodes || code === null || code <= 128) return { code, signal };
  const name = Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0] as
    | NodeJS.Signals
    | undefined;
  return name ? { code: null, signal: name } : { code, signal };
}

/** `signal SIGKILL` or `exit code 3`, for messages. */
export function describeExit({ code, signal }: ExitStatus): string {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

/** The child leads a process group of its own (it was spawned detached): SIGKILL it and everything it started there. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // not a group leader (a launcher without a session of its own), or already gone
  }
}
