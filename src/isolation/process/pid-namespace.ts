import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { ToolpoolError } from '../../core/error-codes.ts';
import { SandboxErrors } from '../../core/errors.ts';
import { findBwrap } from '../common/find-bwrap.ts';

/** How long the probe may take. */
const PROBE_TIMEOUT_MS = 10_000;

const isRoot = () => process.geteuid?.() === 0;

/**
 * The bwrap command line that runs `command` in a PID namespace of its own
 * and nothing else: the whole file system as it is (`--dev-bind / /`), a
 * /proc that shows only the namespace's processes, a session of its own,
 * and death with the host. bwrap is PID 1 inside, so the command's
 * `process.ppid` is bwrap (which ignores what it is sent) and the host's
 * PIDs do not exist. Run by root it keeps root's file rights, as the
 * process tier always did, but no capability; run by another user it needs
 * a user namespace, which gets no capabilities and may not nest.
 */
export function pidNamespaceArgs(command: readonly string[], writable?: readonly string[]): string[] {
  // Root keeps root's file rights but no capability: with CAP_SYS_ADMIN it could unmount this /proc and reach the host's
  // processes again (their memory, their environment). bwrap also sets no_new_privs, so no exec gives them back.
  const userNamespace = isRoot() ? ['--cap-drop', 'ALL'] : ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL'];
  return [
    ...userNamespace,
    ...fileSystem(writable),
    '--unshare-pid',
    '--proc',
    '/proc',
    '--die-with-parent',
    '--new-session',
    '--',
    ...command,
  ];
}

/**
 * The whole file system as it is; or, given the paths the child may write
 * (under permissions: `fsWrite`), the whole file system read-only but for
 * those and /dev. What opens files past Node's permission model (V8's own
 * log files, a native library) then cannot write anywhere else either, and
 * a process without capabilities cannot remount it.
 */
function fileSystem(writable: readonly string[] | undefined): string[] {
  if (writable === undefined) return ['--dev-bind', '/', '/'];
  const binds = writable.flatMap((path) => {
    const real = existingRealPath(path);
    return real === undefined ? [] : ['--bind', real, real];
  });
  return ['--ro-bind', '/', '/', '--dev-bind', '/dev', '/dev', ...binds];
}

function existingRealPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined; // nothing there to bind: the permission model refuses writes there anyway
  }
}

/** What a probe of bwrap found: it can start a PID namespace, it cannot, or it gave no answer in time. */
export type ProbeAnswer = 'works' | 'refused' | 'no answer';

let probe: Promise<string | undefined> | undefined;

/**
 * The bwrap that can start a PID namespace here, or undefined: no bwrap on
 * PATH, or a kernel that refuses (no user namespaces for this user). Tried
 * once per process, with a throwaway `true`. A probe that gave no answer
 * (timed out, or could not be spawned: an overloaded machine) is not a
 * refusal: the launch that asked fails, saying so, and the next one asks
 * again. Taking it for a refusal would run every later child of this
 * process without its PID namespace and, under permissions, with a
 * writable file system: a wall given up for one slow moment.
 */
export function pidNamespaceSupport(
  ask: (bwrap: string) => Promise<ProbeAnswer> = askBwrap,
): Promise<string | undefined> {
  probe ??= supportOf(findBwrap(), ask);
  return probe;
}

/** The answer for `bwrap`; a probe without an answer is forgotten. */
async function supportOf(
  bwrap: string | undefined,
  ask: (bwrap: string) => Promise<ProbeAnswer>,
): Promise<string | undefined> {
  if (process.platform !== 'linux' || !bwrap) return undefined;
  const answer = await ask(bwrap);
  if (answer === 'works') return bwrap;
  if (answer === 'refused') return undefined;
  probe = undefined;
  throw new ToolpoolError('TOOLPOOL_ERR_SANDBOX_UNAVAILABLE', SandboxErrors.probeUnanswered(bwrap, PROBE_TIMEOUT_MS));
}

/** Starts a throwaway PID namespace running `node --version` (`ask` above is this but in tests). */
export function askBwrap(bwrap: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    const child = spawn(bwrap, pidNamespaceArgs([process.execPath, '--version']), {
      env: {},
      stdio: 'ignore',
      timeout: timeoutMs,
    });
    // Out of processes or memory for a moment: no answer. Any other spawn failure (not executable) is a refusal.
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EAGAIN' || error.code === 'ENOMEM' ? 'no answer' : 'refused'),
    );
    // Killed by the timeout: no answer. An exit code is bwrap's answer.
    child.on('close', (code) => resolve(code === 0 ? 'works' : code === null ? 'no answer' : 'refused'));
  });
}
