import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toRunnableRuntime } from '../worker/module-compiler.ts';
import { childSpawnOptions, withLimits, type ChildLauncher, type ChildLaunch, type ChildSpec } from '../process/child-launcher.ts';
import { bwrapArgs } from './bwrap-args.ts';
import { needsLowPorts, type NetTarget } from './net-allowlist.ts';
import { SANDBOX_SOCKET, startNet, type NetPlan } from './net-plan.ts';
import { nodeRuntimeFiles } from './node-libraries.ts';
import { sandboxStdio } from './sandbox-stdio.ts';
import { sandboxDropTarget } from './sandbox-user.ts';

/**
 * Starts the process tier's child inside bubblewrap: the same node binary
 * (process.execPath) and flags, the same entry, the same clean env and data
 * cap, but in a sandbox that shows only what the spec says the child reads
 * and writes. One launcher per sandbox tier; the network proxy it starts on
 * first use serves every sandbox of that tier until `close()`.
 */
export class SandboxLauncher implements ChildLauncher {
  readonly name = 'sandbox';
  #net: Promise<NetPlan | undefined> | undefined;

  constructor(
    private readonly bwrap: string,
    private readonly targets: readonly NetTarget[],
  ) {}

  async launch(spec: ChildSpec): Promise<ChildLaunch> {
    const [runtimeFiles, sandboxEntry, net] = await Promise.all([nodeRuntimeFiles(), sandboxEntryFile(), this.#netPlan()]);
    const entry = spec.nodeArgs.at(-1)!;
    const flags = spec.nodeArgs.slice(0, -1);
    const dropTo = sandboxDropTarget();
    const plan = JSON.stringify({ ...(net ? { socket: SANDBOX_SOCKET, rules: net.rules } : { rules: [] }), ...(dropTo ? { dropTo } : {}) });
    const layout = {
      runtimeFiles,
      readOnly: [...spec.readPaths, sandboxEntry, entry],
      writable: spec.writePaths,
      generated: net?.generated ?? [],
      lowPorts: needsLowPorts(this.targets),
      privileged: dropTo !== undefined,
      // As much as the call may use of memory: a tmpfs holds host RAM outside the data cap.
      tmpBytes: spec.maxMemoryMb * 1024 * 1024,
      workingDirectory: process.cwd(),
    };
    const inner = [spec.node, ...flags, sandboxEntry, plan, entry];
    const { command, args } = withLimits(spec, this.bwrap, bwrapArgs(layout, inner));
    const stdio = await sandboxStdio();
    const options = childSpawnOptions(spec, stdio.stdout, stdio.stderr);
    return { command, args, options, cleanup: () => void stdio.close(), signalsAsExitCodes: true };
  }

  async close(): Promise<void> {
    const net = await this.#net?.catch(() => undefined);
    this.#net = undefined;
    await net?.close();
  }

  #netPlan(): Promise<NetPlan | undefined> {
    this.#net ??= this.targets.length === 0 ? Promise.resolve(undefined) : startNet(this.targets);
    return this.#net;
  }
}

function sandboxEntryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableRuntime(fileURLToPath(new URL(`./sandbox-child${extension}`, import.meta.url)));
}
