import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GeneratedFile } from './bwrap-args.ts';
import { forwardRules, hostsFile, type ForwardRule, type NetTarget } from './net-allowlist.ts';
import { NetProxy } from './net-proxy.ts';
import { sandboxDropTarget } from './sandbox-user.ts';

/** Where the host-side proxy's socket appears inside the sandbox. */
export const SANDBOX_SOCKET = '/run/toolpool/net.sock';

/** What a sandbox's network looks like: the host-side proxy and the files that point names at the forwarders. */
export interface NetPlan {
  proxy: NetProxy;
  /** What the forwarders inside listen on, and for which target. */
  rules: ForwardRule[];
  /** The proxy's socket, /etc/hosts and /etc/nsswitch.conf, bound into the sandbox. */
  generated: GeneratedFile[];
  /** Stops the proxy and removes the generated files. */
  close(): Promise<void>;
}

/** Starts the host-side proxy for `targets` and writes the files that send their names to the forwarders. */
export async function startNet(targets: readonly NetTarget[]): Promise<NetPlan> {
  // Under a root host the sandbox's user (nobody) must be able to connect to the socket; its folder keeps everyone else out.
  const proxy = await NetProxy.start(targets, sandboxDropTarget() !== undefined);
  const { rules, hosts } = forwardRules(targets);
  let folder: string | undefined;
  try {
    folder = await mkdtemp(join(tmpdir(), 'toolpool-sandbox-etc-'));
    await writeFile(join(folder, 'hosts'), hostsFile(hosts));
    // Names resolve from the sandbox's /etc/hosts only: there is no DNS inside.
    await writeFile(join(folder, 'nsswitch.conf'), 'hosts: files\n');
  } catch (error) {
    // Nothing of a start that failed half way stays behind: the proxy stops, the files go.
    await proxy.close();
    if (folder) await rm(folder, { recursive: true, force: true });
    throw error;
  }
  const hostsPath = join(folder, 'hosts');
  const nsswitchPath = join(folder, 'nsswitch.conf');
  return {
    proxy,
    rules,
    generated: [
      { source: proxy.socketPath, target: SANDBOX_SOCKET },
      { source: hostsPath, target: '/etc/hosts' },
      { source: nsswitchPath, target: '/etc/nsswitch.conf' },
    ],
    async close() {
      await proxy.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
