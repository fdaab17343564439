import { existsSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';

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
  /** Bound writable at the same path (fsWrite). */
  writable: readonly string[];
  generated: readonly GeneratedFile[];
  /** The forwarder must listen on a port below 1024 (see netCapabilities). */
  lowPorts: boolean;
  /**
   * The working directory inside: the host's, as for the process tier's
   * child (compiled modules name their sources relative to it, so the child
   * finds the host's compiled files). Empty unless it is bound.
   */
  workingDirectory: string;
}

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
 */
export function bwrapArgs(layout: SandboxLayout, command: readonly string[]): string[] {
  return [
    ...['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'],
    ...netCapabilities(layout.lowPorts),
    ...['--die-with-parent', '--new-session', '--hostname', 'toolpool-sandbox'],
    ...['--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp'],
    ...layout.runtimeFiles.flatMap((file) => ['--ro-bind', file, file]),
    ...bindsInPathOrder(layout),
    ...['--dir', layout.workingDirectory, '--chdir', layout.workingDirectory],
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
 * nested one). The capability covers only that network namespace.
 */
function netCapabilities(lowPorts: boolean): string[] {
  return lowPorts ? ['--cap-drop', 'ALL', '--cap-add', 'CAP_NET_BIND_SERVICE'] : ['--disable-userns', '--cap-drop', 'ALL'];
}

type Bind = { flag: string; source: string; target: string };

function bindsInPathOrder(layout: SandboxLayout): string[] {
  const binds: Bind[] = [
    ...layout.readOnly.flatMap((path) => bindsFor('--ro-bind-try', path)),
    ...layout.writable.flatMap((path) => bindsFor('--bind-try', path)),
    ...layout.generated.map(({ source, target }) => ({ flag: '--ro-bind', source, target })),
  ];
  const seen = new Set<string>();
  return binds
    .sort((a, b) => depth(a.target) - depth(b.target) || (a.target < b.target ? -1 : a.target > b.target ? 1 : 0))
    .filter((bind) => !seen.has(`${bind.flag} ${bind.target}`) && seen.add(`${bind.flag} ${bind.target}`))
    .flatMap(({ flag, source, target }) => [flag, source, target]);
}

/** A path at its own place and, if it goes through a symlink, at its real place too (Node imports by real path). */
function bindsFor(flag: string, path: string): Bind[] {
  const absolute = trimSeparator(resolve(path));
  const real = existsSync(absolute) ? trimSeparator(realpathSync(absolute)) : absolute;
  const binds = [{ flag, source: real, target: real }];
  if (real !== absolute) binds.push({ flag, source: real, target: absolute });
  return binds;
}

function depth(path: string): number {
  return path.split(sep).length;
}

function trimSeparator(path: string): string {
  return path.length > 1 && path.endsWith(sep) ? path.slice(0, -1) : path;
}
