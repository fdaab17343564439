import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toRunnableModule } from '../pool/module-compiler.ts';
import { workerEntryReadPaths } from '../pool/worker-pool.ts';
import { bwrapArgs, type SandboxLayout } from '../isolation/sandbox/bwrap-args.ts';
import { needsLowPorts, type NetTarget } from '../isolation/sandbox/net-allowlist.ts';
import { SANDBOX_SOCKET, startNet } from '../isolation/sandbox/net-plan.ts';
import { nodeRuntimeFiles } from '../isolation/sandbox/node-libraries.ts';
import { sandboxDropTarget } from '../isolation/sandbox/sandbox-user.ts';
import type { McpServerPermissions } from './types.ts';
import { programFiles } from './command.ts';
import type { LaunchTarget, ServerLaunch } from './launch.ts';
import type { SandboxEntryPlan } from './sandbox-entry.ts';

export interface SandboxOptions {
  bwrap: string;
  permissions: McpServerPermissions;
  netTargets: readonly NetTarget[];
  /** The size of the sandbox's private /tmp (a tmpfs, held in host memory). */
  tmpBytes: number;
}

/**
 * A server in bubblewrap, with the sandbox tier's layout: an empty root
 * showing only the program and its libraries, `fsRead` (read-only) and
 * `fsWrite`, a private /tmp, its own PID, network, IPC and UTS namespaces,
 * no network but the `net` list. Inside, toolpool's small Node entry
 * (sandbox-entry.ts) starts the forwarders, becomes nobody under a root
 * host, and runs the server. bwrap itself starts with an empty
 * environment; the server's `env` travels in the plan on fd 3.
 */
export async function sandboxLaunch(target: LaunchTarget, options: SandboxOptions): Promise<ServerLaunch> {
  const { permissions, netTargets } = options;
  const [nodeFiles, serverFiles, entry, net] = await Promise.all([
    nodeRuntimeFiles(),
    programFiles(target.program),
    entryFile(),
    netTargets.length > 0 ? startNet(netTargets) : undefined,
  ]);
  const dropTo = sandboxDropTarget();
  const layout: SandboxLayout = {
    runtimeFiles: [...new Set([...nodeFiles, ...serverFiles])],
    // The entry, and in a built package the files it imports.
    readOnly: [entry, ...workerEntryReadPaths(), ...(permissions.fsRead ?? [])],
    writable: [...(permissions.fsWrite ?? [])],
    generated: net?.generated ?? [],
    lowPorts: needsLowPorts(netTargets),
    privileged: dropTo !== undefined,
    tmpBytes: options.tmpBytes,
    workingDirectory: target.cwd,
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
  return {
    command: options.bwrap,
    args: bwrapArgs(layout, [process.execPath, entry]),
    options: { env: {}, stdio: ['pipe', 'pipe', 'pipe', 'pipe'], detached: true },
    plan: JSON.stringify(plan),
    signalsAsExitCodes: true,
    ...(net ? { close: () => net.close() } : {}),
  };
}

function entryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableModule(fileURLToPath(new URL(`./sandbox-entry${extension}`, import.meta.url)));
}
