import { spawn } from 'node:child_process';
import { SandboxErrors } from '../../core/errors.ts';
import { findBwrap } from '../common/find-bwrap.ts';
import { nodeRuntimeFiles } from './node-libraries.ts';
import { ToolpoolError } from '../../core/error-codes.ts';

export { findBwrap };

/** How long the probe sandbox may take to start and exit. */
const PROBE_TIMEOUT_MS = 10_000;
/** How much of bwrap's complaint goes into the error text. */
const REASON_CHARS = 300;

const probes = new Map<string, Promise<string>>();

/**
 * Resolves to the bwrap to use, after starting one throwaway sandbox with
 * the same namespaces the tier uses: finding the binary is not enough, a
 * kernel that refuses user namespaces only shows when bwrap runs. Rejects
 * with a message that names bubblewrap, how to install it and which tier
 * to use meanwhile. One probe per bwrap path and process.
 */
export function checkSandboxSupport(path: string | undefined = process.env.PATH): Promise<string> {
  if (process.platform !== 'linux') return Promise.reject(new Error(SandboxErrors.notLinux(process.platform)));
  const bwrap = findBwrap(path);
  if (!bwrap) return Promise.reject(new Error(SandboxErrors.bwrapMissing()));
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = probeBwrap(bwrap);
    probes.set(bwrap, probe);
    probe.catch(() => probes.delete(bwrap)); // a later executor may find it fixed
  }
  return probe;
}

async function probeBwrap(bwrap: string): Promise<string> {
  const binds = (await nodeRuntimeFiles()).flatMap((file) => ['--ro-bind', file, file]);
  const args = [
    ...['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--disable-userns'],
    ...['--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--proc', '/proc', '--dev', '/dev'],
    ...binds,
    '--',
    process.execPath,
    '--version',
  ];
  const { code, output } = await run(bwrap, args);
  if (code !== 0)
    throw new ToolpoolError(
      'TOOLPOOL_ERR_SANDBOX_UNAVAILABLE',
      SandboxErrors.bwrapRefused(bwrap, reasonText(output, code)),
    );
  return bwrap;
}

function reasonText(output: string, code: number | string): string {
  const text = output.trim().replace(/\s+/g, ' ');
  return (text || `exit ${code}`).slice(0, REASON_CHARS);
}

function run(command: string, args: string[]): Promise<{ code: number | string; output: string }> {
  return new Promise((resolve) => {
    // A clean environment and no inherited descriptors, as for the real sandbox.
    const child = spawn(command, args, { env: {}, stdio: ['ignore', 'pipe', 'pipe'], timeout: PROBE_TIMEOUT_MS });
    let output = '';
    const collect = (chunk: Buffer) => void (output.length < 4096 && (output += chunk.toString()));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (error) => resolve({ code: 'spawn', output: error.message }));
    child.on('close', (code, signal) => resolve({ code: code ?? signal ?? 'unknown', output }));
  });
}
