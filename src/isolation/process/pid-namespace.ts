import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { ToolpoolError } from '../../core/error-codes.ts';
import { SandboxErrors, errorMessage } from '../../core/errors.ts';
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

/**
 * What a probe of bwrap found: it starts a PID namespace; it refuses, for
 * a reason that lasts (the kernel or a policy forbids the namespaces); or
 * it gave no answer that lasts (timed out, or failed for want of a
 * resource: processes, memory, descriptors, namespaces), with why.
 */
export type ProbeAnswer = { kind: 'works' } | { kind: 'refused' } | { kind: 'no answer'; why: string };

let probe: Promise<string | undefined> | undefined;

/**
 * The bwrap that can start a PID namespace here, or undefined: no bwrap on
 * PATH, or a kernel that refuses (no user namespaces for this user). Tried
 * once per process, with a throwaway `node --version`. A probe that gave no
 * lasting answer (an overloaded machine) is not a refusal: the launch that
 * asked fails, saying so, and the next one asks again. Taking it for a
 * refusal would run every later child of this process without its PID
 * namespace and, under permissions, with a writable file system: a wall
 * given up for one slow moment.
 */
export function pidNamespaceSupport(
  ask: (bwrap: string) => Promise<ProbeAnswer> = askBwrap,
): Promise<string | undefined> {
  probe ??= supportOf(findBwrap(), ask);
  return probe;
}

/** The answer for `bwrap`; a probe without a lasting answer is forgotten. */
async function supportOf(
  bwrap: string | undefined,
  ask: (bwrap: string) => Promise<ProbeAnswer>,
): Promise<string | undefined> {
  if (process.platform !== 'linux' || !bwrap) return undefined;
  let answer: ProbeAnswer;
  try {
    answer = await ask(bwrap);
  } catch (error) {
    answer = { kind: 'no answer', why: errorMessage(error) };
  }
  if (answer.kind === 'works') return bwrap;
  if (answer.kind === 'refused') return undefined;
  probe = undefined;
  throw new ToolpoolError('TOOLPOOL_ERR_SANDBOX_UNAVAILABLE', SandboxErrors.probeUnanswered(bwrap, answer.why));
}

/** bwrap's words for a refusal that lasts: no unprivileged user namespaces, a policy (AppArmor, seccomp) forbids them. */
const LASTING_REFUSAL = /permission denied|operation not permitted|no permissions to create/i;

/** Starts a throwaway PID namespace running `node --version` (`ask` above is this but in tests). */
export function askBwrap(bwrap: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    let stderr = '';
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bwrap, pidNamespaceArgs([process.execPath, '--version']), {
        env: {},
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: timeoutMs,
      });
    } catch (error) {
      // Thrown at once for some errors (ENOMEM on Node 20): the machine's state, not bwrap's answer.
      return resolve({ kind: 'no answer', why: errorMessage(error) });
    }
    child.stderr!.on('data', (chunk: Buffer) => void (stderr.length < 2048 && (stderr += chunk.toString())));
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === 'ENOENT' || error.code === 'EACCES'
          ? { kind: 'refused' }
          : { kind: 'no answer', why: `it could not be started (${error.code ?? error.message})` },
      ),
    );
    child.on('close', (code, signal) => {
      if (code === 0) return resolve({ kind: 'works' });
      const said = stderr.trim().replace(/\s+/g, ' ').slice(0, 300);
      if (code !== null && LASTING_REFUSAL.test(said)) return resolve({ kind: 'refused' });
      const why =
        code === null
          ? `it did not end within ${timeoutMs} ms (${signal})`
          : `it exited with ${code}: ${said || 'no message'}`;
      resolve({ kind: 'no answer', why });
    });
  });
}
