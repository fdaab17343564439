import { existsSync, realpathSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';

/** A file made on the host for the sandbox (its /etc/hosts, the proxy socket), bound read-only at `target`. */
export interface GeneratedFile {
  source: string;
  target: string;
}

/** What the sandbox's mount namespace shows: nothing of the host beyond these. */
export interface SandboxLayout {
  /** The node binary and its shared libraries: must exist. */
  runtimeFiles: readonly string[];
  /** Bound read-only at the same path (toolpool's files, node_modules, tool modules, compile cache, fsRead). */
  readOnly: readonly string[];
  /** Bound writable at the same path (the shared part of fsWrite). */
  writable: readonly string[];
  /** Bound writable at another path: each module's own space of an fsWrite folder, shown at the folder's path (see fs-write-spaces.ts). */
  writableBinds?: readonly { source: string; target: string }[];
  generated: readonly GeneratedFile[];
  /** The forwarder must listen on a port below 1024 (see netCapabilities). */
  lowPorts: boolean;
  /**
   * The host runs as root. A user namespace would then map the sandbox's
   * uid to host uid 0 (root on every file it can see, `/proc/sys` among
   * them), so the sandbox gets no user namespace: bwrap sets it up with
   * root's rights, and the sandbox's entry switches to nobody (it keeps only
   * CAP_SETUID and CAP_SETGID for that, and loses them with it).
   */
  privileged: boolean;
  /** The size of the private /tmp (a tmpfs, in host memory) in bytes; /dev/shm gets as much, at most SHM_MAX_BYTES. */
  tmpBytes: number;
  /** Still files bound over /proc's host-wide counters (/proc/stat, /proc/loadavg); see sandbox-files.ts. */
  procCounters?: readonly GeneratedFile[];
  /** The descriptor bwrap reads its seccomp filter from (see seccomp.ts); none where there is no filter. */
  seccompFd?: number;
  /**
   * The working directory inside: the host's, as for the process tier's
   * child (compiled modules name their sources relative to it, so the child
   * finds the host's compiled files). Empty unless it is bound.
   */
  workingDirectory: string;
}

/** /dev/shm's size at most: POSIX shared memory needs a little, and each byte is host memory beside /tmp's. */
export const SHM_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The bwrap command line for one sandbox around `command`.
 *
 * Namespaces: user, PID (the host's processes are neither visible nor
 * signalable), network (nothing but the sandbox's own loopback), IPC, UTS,
 * cgroup. `--new-session` keeps the sandbox out of the host's session and
 * terminal (no TIOCSTI, no kill(0) of the host's process group); bwrap is
 * PID 1 (no `--as-pid-1`), so when the child exits the kernel kills every
 * process left in the namespace; `--die-with-parent` ends the sandbox with
 * the host. Mounts: an empty root, /proc of the sandbox's own PID
 * namespace, a minimal /dev, a private /tmp, then the binds in path order
 * so a bind inside another one lands on top of it.
 *
 * What a sandbox shares with the host's kernel is bounded or hidden: /tmp
 * and /dev/shm are tmpfs of a fixed size, `/` and /dev are read-only
 * (tmpfs without a size otherwise, writable where the sandbox's user owns
 * them, as under a host that is not root), /proc/sys and
 * /proc/sysrq-trigger are read-only mounts (not just root-owned files:
 * the sandbox starts as root under a root host), the host's counters in
 * /proc/stat and /proc/loadavg are covered, and the seccomp filter keeps
 * the kernel's keyrings out of reach.
 */
export function bwrapArgs(layout: SandboxLayout, command: readonly string[]): string[] {
  return [
    ...(layout.privileged ? [] : ['--unshare-user']),
    ...['--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'],
    ...capabilities(layout),
    ...['--die-with-parent', '--new-session', '--hostname', 'toolpool-sandbox'],
    ...[
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--perms',
      '1777',
      '--size',
      String(Math.min(layout.tmpBytes, SHM_MAX_BYTES)),
      '--tmpfs',
      '/dev/shm',
    ],
    ...['--perms', '1777', '--size', String(layout.tmpBytes), '--tmpfs', '/tmp'],
    ...openParents([
      ...layout.runtimeFiles.map((file) => ({ flag: '--ro-bind', source: file, target: file })),
      ...binds(layout),
    ]),
    ...layout.runtimeFiles.flatMap((file) => ['--ro-bind', file, file]),
    ...bindsInPathOrder(layout),
    ...['--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger'],
    ...(layout.procCounters ?? []).flatMap(({ source, target }) => ['--ro-bind', source, target]),
    ...['--perms', '0755', '--dir', layout.workingDirectory, '--chdir', layout.workingDirectory],
    ...['--remount-ro', '/dev', '--remount-ro', '/'],
    ...(layout.seccompFd !== undefined ? ['--seccomp', String(layout.seccompFd)] : []),
    '--',
    ...command,
  ];
}

/**
 * No capabilities, and no nested user namespaces (the widest kernel attack
 * surface an unprivileged process can reach), unless a listed port is
 * below 1024: then the forwarder needs CAP_NET_BIND_SERVICE in the user
 * namespace that owns the sandbox's network namespace, which
 * `--disable-userns` would put out of reach (it moves the sandbox into a
 * nested one). The capability covers only that network namespace. Under a
 * root host (no user namespace, see `privileged`) the entry also needs
 * CAP_SETUID and CAP_SETGID, once, to become nobody; nested user
 * namespaces are then not disabled (`--disable-userns` needs one of its own).
 */
function capabilities({ lowPorts, privileged }: SandboxLayout): string[] {
  const kept = [...(lowPorts ? ['CAP_NET_BIND_SERVICE'] : []), ...(privileged ? ['CAP_SETUID', 'CAP_SETGID'] : [])];
  const nested = lowPorts || privileged ? [] : ['--disable-userns'];
  return [...nested, '--cap-drop', 'ALL', ...kept.flatMap((cap) => ['--cap-add', cap])];
}

type Bind = { flag: string; source: string; target: string };

function binds(layout: SandboxLayout): Bind[] {
  return [
    ...layout.readOnly.flatMap((path) => bindsFor('--ro-bind-try', path)),
    ...layout.writable.flatMap((path) => bindsFor('--bind-try', path)),
    ...(layout.writableBinds ?? []).flatMap(({ source, target }) => bindsFor('--bind-try', target, source)),
    ...layout.generated.map(({ source, target }) => ({ flag: '--ro-bind', source, target })),
  ];
}

/**
 * The folders above each bind that bwrap would create itself, made first
 * as 0755: privileged bwrap (a root host) creates them 0700, which the
 * sandbox's user (nobody) could not pass through. Folders inside another
 * bind are that bind's own.
 */
function openParents(all: Bind[]): string[] {
  const targets = new Set(all.map((bind) => bind.target));
  const inside = (path: string) =>
    [...targets].some((target) => path !== target && path.startsWith(target === sep ? sep : target + sep));
  // The mounts bwrap made before (the private /tmp, /proc, /dev) are folders of their own, with their own modes.
  const mounted = (path: string) => path === '/tmp' || path === '/proc' || path === '/dev';
  const parents = new Set<string>();
  for (const { target } of all) {
    for (
      let dir = dirname(target);
      dir !== sep && dir !== '.' && !mounted(dir) && !targets.has(dir) && !inside(dir);
      dir = dirname(dir)
    )
      parents.add(dir);
  }
  return [...parents]
    .sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : 1))
    .flatMap((dir) => ['--perms', '0755', '--dir', dir]);
}

function bindsInPathOrder(layout: SandboxLayout): string[] {
  const seen = new Set<string>();
  return binds(layout)
    .sort((a, b) => depth(a.target) - depth(b.target) || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0))
    .filter((bind) => !seen.has(`${bind.flag} ${bind.target}`) && seen.add(`${bind.flag} ${bind.target}`))
    .flatMap(({ flag, source, target }) => [flag, source, target]);
}

/** A path (or `source` shown there) at its own place and, if it goes through a symlink, at its real place too (Node imports by real path). */
function bindsFor(flag: string, path: string, source?: string): Bind[] {
  const absolute = trimSeparator(resolve(path));
  const real = existsSync(absolute) ? trimSeparator(realpathSync(absolute)) : absolute;
  const from = source ?? real;
  const binds = [{ flag, source: from, target: real }];
  if (real !== absolute) binds.push({ flag, source: from, target: absolute });
  return binds;
}

function depth(path: string): number {
  return path.split(sep).length;
}

function trimSeparator(path: string): string {
  return path.length > 1 && path.endsWith(sep) ? path.slice(0, -1) : path;
}
