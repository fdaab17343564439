import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from './bwrap-args.ts';
import { seccompProgram } from './seccomp.ts';

/** The files every sandbox of this process shares, read-only: its /proc counters and its seccomp filter. */
export interface SandboxFiles {
  /** Bound over /proc/stat and /proc/loadavg. */
  procCounters: GeneratedFile[];
  /** The compiled filter for bwrap's `--seccomp`, or undefined where toolpool has none for this architecture. */
  seccomp: string | undefined;
}

let files: SandboxFiles | undefined;

/**
 * Written once per process into a private folder, removed at exit. The
 * counters are still figures, all zero: the host's /proc/stat (CPU time per
 * core, context switches, processes started, boot time) and /proc/loadavg
 * tell a sandbox what the host and other sandboxes are doing. The number of
 * `cpu` lines stays the host's, so a tool can still size its work.
 */
export function sandboxFiles(): SandboxFiles {
  if (files) return files;
  const folder = mkdtempSync(join(tmpdir(), 'toolpool-sandbox-files-'));
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  const stat = join(folder, 'stat');
  const loadavg = join(folder, 'loadavg');
  const zeros = ' 0 0 0 0 0 0 0 0 0 0';
  const count = Math.max(1, cpus().length);
  const cpuLines = [`cpu ${zeros}`, ...Array.from({ length: count }, (_, n) => `cpu${n}${zeros}`)];
  writeFileSync(
    stat,
    [
      ...cpuLines,
      'intr 0',
      'ctxt 0',
      'btime 0',
      'processes 0',
      'procs_running 1',
      'procs_blocked 0',
      'softirq 0',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  writeFileSync(loadavg, '0.00 0.00 0.00 1/1 1\n', { mode: 0o644 });
  const program = seccompProgram();
  let seccomp: string | undefined;
  if (program) {
    seccomp = join(folder, 'seccomp.bpf');
    writeFileSync(seccomp, program, { mode: 0o644 });
  }
  files = {
    procCounters: [
      { source: stat, target: '/proc/stat' },
      { source: loadavg, target: '/proc/loadavg' },
    ],
    seccomp,
  };
  return files;
}
