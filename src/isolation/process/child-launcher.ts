import type { Readable } from 'node:stream';
import { spawn, type ChildProcess, type SpawnOptions, type StdioOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { pidNamespaceArgs, pidNamespaceSupport } from './pid-namespace.ts';
import { CHILD_MALLOC_ARENAS } from './node-reservation.ts';

/**
 * Everything the process tier's child needs, independent of how it is
 * started. A launcher turns it into a command line: the plain process tier
 * runs Node under `prlimit` in a PID namespace of its own (bubblewrap, where
 * it works), the sandbox tier wraps the same in a full `bwrap` sandbox.
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
  /** Cap on the child's open descriptors (RLIMIT_NOFILE), so what a tool leaves open cannot exhaust more than its own child. */
  maxOpenFiles: number;
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
  /** The child's working folder (default: the host's). */
  cwd?: string;
}

/** How to start the child: what `child_process.spawn(command, args, options)` gets. */
export interface ChildLaunch {
  command: string;
  args: string[];
  /** Must keep fds 0 and 3 `'pipe'`s, toolpool's framed channel (see `childSpawnOptions`). */
  options: SpawnOptions;
  /**
   * Where the child's stderr reaches the host when fd 2 is not a pipe of the
   * spawned process (the sandbox gives it a socket): the host reads there
   * why V8 aborted the child. Copying it to the host's stderr is the launcher's.
   */
  stderr?: Readable;
  /** Called once after the child exited, to undo what the launch set up (a proxy, a socket). */
  cleanup?: () => void;
  /**
   * The command reports a child killed by a signal as exit code 128 + the
   * signal's number (bubblewrap does), so the host names the signal.
   */
  signalsAsExitCodes?: boolean;
}

export interface ChildLauncher {
  /** Names the tier in messages: `'process'`, `'sandbox'`. */
  readonly name: string;
  launch(spec: ChildSpec): ChildLaunch | Promise<ChildLaunch>;
}

type StdioEntry = Exclude<StdioOptions, string>[number];

/**
 * Where the framed channel is in the child (see frame-channel.ts): the host's
 * frames come in on fd 0, the child's go out on fd 3. Two descriptors because
 * Node 25+ under the permission model lets a process open a socket on its
 * own stdio without `--allow-net` but on no other descriptor, and the child
 * must not need network access to reach its host: it reads its stdin as a
 * socket and writes fd 3 with plain descriptor writes, which no permission
 * gates.
 */
export const FROM_HOST_FD = 0;
export const TO_HOST_FD = 3;

/**
 * The spawn options every launcher starts from: the clean env (with one
 * malloc arena unless it says otherwise: see CHILD_MALLOC_ARENAS), stdout and
 * stderr through pipes (the host forwards both to its stderr,
 * marked as tool output, and reads "out of memory" from stderr to name the
 * memory limit; the child never gets the host's own stdout, which a host
 * may use for a protocol), sockets on fds 0 and 3 for toolpool's own
 * framed channel (not Node's IPC channel, whose parser a tool could break
 * with a few bytes), and a session of its own, so a tool's `kill(0)` or a
 * signal to the host's process group does not reach the host.
 */
/**
 * Spawns a launch. Node throws some spawn failures (E2BIG, a NUL byte in an
 * argument) and reports others (ENOENT, EMFILE: then with no stdio at all)
 * as an 'error' event on the next tick: either way this rejects with the
 * cause, after the launch's cleanup, and a later 'error' can never go
 * unheard (an unheard one would end the host).
 */
export async function spawnLaunch(launch: ChildLaunch): Promise<ChildProcess> {
  let child: ChildProcess;
  try {
    child = spawn(launch.command, launch.args, launch.options);
  } catch (error) {
    launch.cleanup?.();
    throw error;
  }
  const failed = new Promise<unknown>((resolve) => child.once('error', resolve));
  child.on('error', () => undefined); // once it runs, its exit says what happened
  if (child.pid !== undefined) return child;
  launch.cleanup?.();
  throw await failed;
}

export function childSpawnOptions(
  spec: ChildSpec,
  stdout: StdioEntry = 'pipe',
  stderr: StdioEntry = 'pipe',
): SpawnOptions {
  return {
    env: { MALLOC_ARENA_MAX: CHILD_MALLOC_ARENAS, ...spec.env },
    stdio: ['pipe', stdout, stderr, 'pipe'],
    detached: true,
    ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
  };
}

/**
 * Caps a command's data segment and descriptors with prlimit (Linux). The
 * data cap bounds Buffers and ArrayBuffers too; `--as` cannot be used: Node
 * reserves far more address space than it uses. Without prlimit the command
 * runs uncapped.
 */
export function withLimits(
  spec: ChildSpec,
  command: string,
  args: string[],
  more: readonly string[] = [],
): { command: string; args: string[] } {
  const prlimit = findPrlimit();
  if (!prlimit) return { command, args };
  return {
    command: prlimit,
    args: [`--data=${spec.memoryCapBytes}`, `--nofile=${spec.maxOpenFiles}`, ...more, command, ...args],
  };
}

export function findPrlimit(): string | undefined {
  return ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => existsSync(path));
}

/**
 * The plain process tier: `prlimit node <flags> <entry>`, inside a PID
 * namespace of its own where bubblewrap works (the host's processes are then
 * neither visible nor signalable: `process.kill(process.ppid)` cannot reach
 * the host), with everything but fsWrite (and /dev) mounted read-only under
 * permissions; elsewhere as a plain child in a session of its own.
 */
export const processLauncher: ChildLauncher = {
  name: 'process',
  async launch(spec) {
    const bwrap = await pidNamespaceSupport();
    const node = [spec.node, ...spec.nodeArgs];
    // Under permissions the file system outside fsWrite is read-only too: structure behind the permission model's flags.
    const writable = spec.nodeArgs.some((flag) => flag === '--permission' || flag === '--experimental-permission')
      ? spec.writePaths
      : undefined;
    const { command, args } = bwrap
      ? withLimits(spec, bwrap, pidNamespaceArgs(node, writable))
      : withLimits(spec, node[0]!, node.slice(1));
    return { command, args, options: childSpawnOptions(spec), ...(bwrap ? { signalsAsExitCodes: true } : {}) };
  },
};
