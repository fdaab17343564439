import { statSync } from 'node:fs';

/** Who a sandbox runs as when the host is root: nobody (65534), a user that owns nothing. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

/** The host runs as root: a user namespace would make the sandbox host-uid 0, so it runs as nobody instead. */
export function hostIsRoot(): boolean {
  return process.geteuid?.() === 0;
}

/**
 * The user the sandbox's entry switches to before any tool code loads, or
 * undefined when the host is not root (the sandbox then runs in a user
 * namespace as the host's own, unprivileged user).
 */
export function sandboxDropTarget(): { uid: number; gid: number } | undefined {
  return hostIsRoot() ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : undefined;
}

/**
 * What nobody could not do with a path the sandbox is given, when the host
 * is root: a folder of `fsWrite` it cannot write, a path of `fsRead` it
 * cannot read. Checked from the mode bits (the sandbox binds the path
 * itself, so its parents do not matter). Undefined when all is well or
 * the host is not root.
 */
export function sandboxAccessProblem(fsRead: readonly string[], fsWrite: readonly string[]): string | undefined {
  if (!hostIsRoot()) return undefined;
  for (const path of fsWrite) {
    if (!allows(path, 'write')) return `permissions.fsWrite ${path} is not writable by uid ${SANDBOX_UID}`;
  }
  for (const path of fsRead) {
    if (!allows(path, 'read')) return `permissions.fsRead ${path} is not readable by uid ${SANDBOX_UID}`;
  }
  return undefined;
}

function allows(path: string, access: 'read' | 'write'): boolean {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return true; // a path that does not exist is bound as nothing (bwrap's -try binds): nothing to refuse
  }
  const bits = (access === 'read' ? 4 : 2) | (stats.isDirectory() ? 1 : 0);
  const shift = stats.uid === SANDBOX_UID ? 6 : stats.gid === SANDBOX_GID ? 3 : 0;
  return ((stats.mode >> shift) & bits) === bits;
}

/**
 * Switches this process to `user` for good: groups, then gid, then uid
 * (after setuid no capability is left to undo it). Run inside the sandbox
 * by its entry, before any code of a tool or a server. A switch that does
 * not hold ends the sandbox rather than run that code as root.
 */
export function becomeUser({ uid, gid }: { uid: number; gid: number }): void {
  process.setgroups!([gid]);
  process.setgid!(gid);
  process.setuid!(uid);
  if (process.getuid!() !== uid || process.geteuid!() !== uid || process.getgid!() !== gid) {
    process.stderr.write('toolpool sandbox: could not leave root; stopping.\n');
    process.exit(70);
  }
}
