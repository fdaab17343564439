import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';

/** The group a sandbox runs in when the host is root: nogroup (65534), a group that owns nothing. */
export const SANDBOX_GID = 65534;
/** The user of a sandbox started without a trust domain's key (nobody). */
export const SANDBOX_UID = 65534;
/**
 * Under a root host each trust domain's sandboxes run as a uid of their
 * own, SANDBOX_UID_BASE plus 24 bits of a hash of the domain's key: no
 * user owns it, no other domain shares it (so neither does a pids limit
 * counted per uid, nor the kernel's user keyring), and it stays the same
 * across restarts, so a domain finds its own files again.
 */
export const SANDBOX_UID_BASE = 0x6000_0000;
const SANDBOX_UID_BITS = 24;

/** The uid a trust domain's sandboxes run as under a root host. */
export function sandboxUid(domainKey: string): number {
  const hash = createHash('sha256').update(domainKey).digest();
  return SANDBOX_UID_BASE + (hash.readUIntBE(0, 3) & ((1 << SANDBOX_UID_BITS) - 1));
}

/** The host runs as root: a user namespace would make the sandbox host-uid 0, so it runs as nobody instead. */
export function hostIsRoot(): boolean {
  return process.geteuid?.() === 0;
}

/**
 * The user the sandbox's entry switches to before any tool code loads, or
 * undefined when the host is not root (the sandbox then runs in a user
 * namespace of its own as the host's own, unprivileged user).
 */
export function sandboxDropTarget(domainKey?: string): { uid: number; gid: number } | undefined {
  if (!hostIsRoot()) return undefined;
  return { uid: domainKey === undefined ? SANDBOX_UID : sandboxUid(domainKey), gid: SANDBOX_GID };
}

/**
 * What a sandbox could not do with a path it is given, when the host is
 * root: a shared folder of `fsWrite` it cannot write, a path of `fsRead`
 * it cannot read. Its uid is its domain's own, so only the group bits (of
 * group 65534) or the bits for others count. Checked from the mode bits
 * (the sandbox binds the path itself, so its parents do not matter).
 * Undefined when all is well or the host is not root. A module's own
 * `fsWrite` space is made by the host for that uid (see fs-write-spaces.ts).
 */
export function sandboxAccessProblem(fsRead: readonly string[], sharedWrite: readonly string[]): string | undefined {
  if (!hostIsRoot()) return undefined;
  for (const path of sharedWrite) {
    if (!allows(path, 'write'))
      return `permissions.fsWriteShared ${path} is not writable by the sandbox's users (group ${SANDBOX_GID} or others)`;
  }
  for (const path of fsRead) {
    if (!allows(path, 'read'))
      return `permissions.fsRead ${path} is not readable by the sandbox's users (group ${SANDBOX_GID} or others)`;
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
  const shift = stats.gid === SANDBOX_GID ? 3 : 0;
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
