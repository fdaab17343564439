import type { SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Everything the process tier's child needs, independent of how it is
 * started. A launcher turns it into a command line: the plain process tier
 * runs Node under `prlimit`, the sandbox tier wraps the same in `bwrap`.
 */
export interface ChildSpec {
  /** The Node binary to run (the host's own, `process.execPath`). */
  node: string;
  /** Node's flags (the permission flags, the same its workers run under) followed by the child's entry file. */
  nodeArgs: string[];
  /** The child's whole environment: the clean one tools see, nothing of the host's. */
  env: Record<string, string>;
  /** Cap on the child's data segment in bytes: Node's own measured reservation plus `maxMemoryMb`. */
  memoryCapBytes: number;
  /** The tool's memory budget the cap was computed from (for messages). */
  maxMemoryMb: number;
  /**
   * Files and folders the child must read, besides the Node binary and its
   * system libraries: the child entry, toolpool's worker files, node_modules,
   * the tool modules, the compile cache, and `permissions.fsRead`.
   */
  readPaths: string[];
  /** Files and folders the child must write: `permissions.fsWrite`. */
  writePaths: string[];
  /** `permissions.net` as the user gave it: undefined (not asked), a boolean, or a 'host:port' list. */
  net?: boolean | readonly string[];
}

/** How to start the child: what `child_process.spawn(command, args, options)` gets. */
export interface ChildLaunch {
  command: string;
  args: string[];
  /** Must keep fd 3 as `'ipc'` with `serialization: 'advanced'`, and fd 2 a pipe (see `childSpawnOptions`). */
  options: SpawnOptions;
  /** Called once after the child exited, to undo what the launch set up (a proxy, a socket). */
  cleanup?: () => void;
}

export interface ChildLauncher {
  /** Names the tier in messages: `'process'`, `'sandbox'`. */
  readonly name: string;
  launch(spec: ChildSpec): ChildLaunch | Promise<ChildLaunch>;
}

/**
 * The spawn options every launcher starts from: the clean env, no stdin,
 * stderr through a pipe (the host forwards it, and reads "out of memory"
 * from it to name the memory limit), the ordered structured-clone IPC
 * channel on fd 3, and a session of its own, so a tool's `kill(0)` or a
 * signal to the host's process group does not reach the host.
 */
export function childSpawnOptions(spec: ChildSpec): SpawnOptions {
  return {
    env: spec.env,
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    serialization: 'advanced',
    detached: true,
  };
}

/**
 * Caps a command's data segment with prlimit (Linux), which bounds Buffers
 * and ArrayBuffers too. `--as` cannot be used: Node reserves far more
 * address space than it uses. Without prlimit the command runs uncapped.
 */
export function withDataCap(bytes: number, command: string, args: string[]): { command: string; args: string[] } {
  const prlimit = findPrlimit();
  if (!prlimit) return { command, args };
  return { command: prlimit, args: [`--data=${bytes}`, command, ...args] };
}

export function findPrlimit(): string | undefined {
  return ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => existsSync(path));
}

/** The plain process tier: `prlimit --data=<cap> node <flags> <entry>`. */
export const processLauncher: ChildLauncher = {
  name: 'process',
  launch(spec) {
    const { command, args } = withDataCap(spec.memoryCapBytes, spec.node, spec.nodeArgs);
    return { command, args, options: childSpawnOptions(spec) };
  },
};
