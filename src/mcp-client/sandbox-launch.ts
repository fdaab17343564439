import { closeSync, existsSync, openSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toRunnableRuntime } from '../isolation/worker/module-compiler.ts';
import { workerEntryReadPaths } from '../isolation/worker/worker-pool.ts';
import { bwrapArgs, type SandboxLayout } from '../isolation/sandbox/bwrap-args.ts';
import { runtimeFilesOf, nodeRuntimeFiles } from '../isolation/sandbox/node-libraries.ts';
import { needsLowPorts, type NetTarget } from '../isolation/sandbox/net-allowlist.ts';
import { SANDBOX_SOCKET, startNet, type NetPlan } from '../isolation/sandbox/net-plan.ts';
import { sandboxDropTarget } from '../isolation/sandbox/sandbox-user.ts';
import { sandboxFiles } from '../isolation/sandbox/sandbox-files.ts';
import { innerNprocLimit, SANDBOX_MAX_TASKS } from '../isolation/sandbox/sandbox-launcher.ts';
import { findPrlimit } from '../isolation/process/child-launcher.ts';
import type { McpServerPermissions } from '../core/mcp-config.ts';
import { programFiles } from './command.ts';
import type { LaunchTarget, ServerLaunch } from './launch.ts';
import type { SandboxEntryPlan } from './sandbox-entry.ts';

export interface SandboxOptions {
  bwrap: string;
  permissions: McpServerPermissions;
  netTargets: readonly NetTarget[];
  /** The size of the sandbox's private /tmp (a tmpfs, held in host memory). */
  tmpBytes: number;
  /** The server's own key (its name and program): its uid under a root host comes from it, shared with no other server. */
  domainKey?: string;
}

/**
 * The limits and filter every sandboxed server gets, as the sandbox tier's
 * children do: the pids limit (on bwrap under a root host, inside the
 * user namespace otherwise), the seccomp filter on a descriptor of its own
 * (after the ones `stdio` has), the still /proc counters.
 */
interface Walls {
  /** The command and arguments before bwrap's (prlimit under a root host). */
  outer: string[];
  /** Before the program inside the sandbox (prlimit in a user namespace), with the files it needs. */
  inner: string[];
  innerFiles: string[];
  layout: Pick<SandboxLayout, 'procCounters' | 'seccompFd'>;
  /** The descriptor to hand bwrap at index `layout.seccompFd`. */
  seccomp?: number;
  close(): void;
}

async function walls(privileged: boolean, stdioLength: number): Promise<Walls> {
  const prlimit = findPrlimit();
  const inner = privileged ? undefined : innerNprocLimit();
  const innerFiles = inner ? await runtimeFilesOf(inner[0]!) : [];
  const files = sandboxFiles();
  const seccomp = files.seccomp !== undefined ? openSync(files.seccomp, 'r') : undefined;
  return {
    outer: privileged && prlimit ? [prlimit, `--nproc=${SANDBOX_MAX_TASKS}`] : [],
    inner: inner ?? [],
    innerFiles,
    layout: { procCounters: files.procCounters, ...(seccomp !== undefined ? { seccompFd: stdioLength } : {}) },
    ...(seccomp !== undefined ? { seccomp } : {}),
    close: () => {
      if (seccomp !== undefined) closeSync(seccomp);
    },
  };
}

/** bwrap under the outer limit, the seccomp descriptor appended to stdio, its closing chained to the launch's own. */
function walled(launch: ServerLaunch, bwrap: string, wall: Walls): ServerLaunch {
  const [command = bwrap, ...before] = wall.outer.length > 0 ? wall.outer : [bwrap];
  const args = wall.outer.length > 0 ? [...before, bwrap, ...launch.args] : launch.args;
  const stdio = [
    ...(launch.options.stdio as unknown[]),
    ...(wall.seccomp !== undefined ? [wall.seccomp] : []),
  ] as typeof launch.options.stdio;
  const closeLaunch = launch.close;
  return {
    ...launch,
    command,
    args,
    options: { ...launch.options, stdio },
    close: async () => {
      wall.close();
      await closeLaunch?.();
    },
  };
}

/**
 * A server in bubblewrap, with the sandbox tier's layout: an empty root
 * showing only the program and its libraries, `fsRead` (read-only) and
 * `fsWrite`, a private /tmp, its own PID, network, IPC and UTS namespaces,
 * no network but the `net` list.
 *
 * What runs inside depends on what the sandbox must do before the server
 * starts. With a `net` list, toolpool's small Node entry (sandbox-entry.ts)
 * starts the forwarders, becomes nobody under a root host and runs the
 * server; bwrap then starts with an empty environment and the server's
 * `env` travels in the plan on fd 3. Without one the server is bwrap's own
 * child (under a root host through `setpriv`, which becomes nobody first),
 * with its `env` as bwrap's: a Node process less to start, which is most of
 * what a sandbox adds to a server's start.
 */
export async function sandboxLaunch(target: LaunchTarget, options: SandboxOptions): Promise<ServerLaunch> {
  const dropTo = sandboxDropTarget(options.domainKey);
  const setpriv = dropTo ? findSetpriv() : undefined;
  if (options.netTargets.length > 0 || (dropTo && !setpriv)) return entryLaunch(target, options);
  const wall = await walls(dropTo !== undefined, 3);
  const [serverFiles, setprivFiles] = await Promise.all([
    programFiles(target.program),
    setpriv ? runtimeFilesOf(setpriv) : [],
  ]);
  const layout = {
    ...sandboxLayout(target, options, [...serverFiles, ...setprivFiles, ...wall.innerFiles], [], undefined),
    ...wall.layout,
  };
  const drop =
    dropTo && setpriv ? [setpriv, `--reuid=${dropTo.uid}`, `--regid=${dropTo.gid}`, '--clear-groups', '--'] : [];
  const launch: ServerLaunch = {
    command: options.bwrap,
    args: bwrapArgs(layout, [...drop, ...wall.inner, target.program, ...target.args]),
    options: { env: { ...target.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true },
    signalsAsExitCodes: true,
  };
  return walled(launch, options.bwrap, wall);
}

/** The sandbox with toolpool's Node entry inside, which starts the forwarders first. */
async function entryLaunch(target: LaunchTarget, options: SandboxOptions): Promise<ServerLaunch> {
  const [nodeFiles, serverFiles, entry, net] = await Promise.all([
    nodeRuntimeFiles(),
    programFiles(target.program),
    entryFile(),
    options.netTargets.length > 0 ? startNet(options.netTargets) : undefined,
  ]);
  const dropTo = sandboxDropTarget(options.domainKey);
  const wall = await walls(dropTo !== undefined, 4);
  // The entry, and in a built package the files it imports.
  const layout = {
    ...sandboxLayout(
      target,
      options,
      [...nodeFiles, ...serverFiles, ...wall.innerFiles],
      [entry, ...workerEntryReadPaths()],
      net,
    ),
    ...wall.layout,
  };
  const plan: SandboxEntryPlan = {
    command: target.program,
    args: [...target.args],
    env: { ...target.env },
    cwd: target.cwd,
    rules: net?.rules ?? [],
    ...(net ? { socket: SANDBOX_SOCKET } : {}),
    ...(dropTo ? { dropTo } : {}),
  };
  const launch: ServerLaunch = {
    command: options.bwrap,
    args: bwrapArgs(layout, [...wall.inner, process.execPath, entry]),
    options: { env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true },
    plan: JSON.stringify(plan),
    signalsAsExitCodes: true,
    ...(net ? { close: () => net.close() } : {}),
  };
  return walled(launch, options.bwrap, wall);
}

function sandboxLayout(
  target: LaunchTarget,
  options: SandboxOptions,
  runtimeFiles: string[],
  ownFiles: string[],
  net: NetPlan | undefined,
): SandboxLayout {
  const dropTo = sandboxDropTarget(options.domainKey);
  return {
    runtimeFiles: [...new Set(runtimeFiles)],
    readOnly: [...ownFiles, ...(options.permissions.fsRead ?? [])],
    writable: [...(options.permissions.fsWrite ?? [])],
    generated: net?.generated ?? [],
    lowPorts: needsLowPorts(options.netTargets),
    privileged: dropTo !== undefined,
    tmpBytes: options.tmpBytes,
    workingDirectory: target.cwd,
  };
}

/** util-linux's setpriv, which switches to another user and execs the server; where it is missing, the Node entry does it. */
function findSetpriv(): string | undefined {
  return ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));
}

let entry: Promise<string> | undefined;

/** The entry as a file the sandbox can run (compiled once per process when toolpool runs from its TypeScript sources). */
function entryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  // A compile that failed is not kept: the next launch compiles again.
  entry ??= toRunnableRuntime(fileURLToPath(new URL(`./sandbox-entry${extension}`, import.meta.url))).catch(
    (error: unknown) => {
      entry = undefined;
      throw error;
    },
  );
  return entry;
}
