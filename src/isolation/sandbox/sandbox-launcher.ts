import { closeSync, openSync } from 'node:fs';
import { release } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toRunnableRuntime } from '../worker/module-compiler.ts';
import {
  childSpawnOptions,
  findPrlimit,
  withLimits,
  type ChildLauncher,
  type ChildLaunch,
  type ChildSpec,
} from '../process/child-launcher.ts';
import { bwrapArgs } from './bwrap-args.ts';
import { needsLowPorts, type NetTarget } from './net-allowlist.ts';
import { SANDBOX_SOCKET, startNet, type NetPlan } from './net-plan.ts';
import { writeSpaces } from './fs-write-spaces.ts';
import { nodeRuntimeFiles, runtimeFilesOf } from './node-libraries.ts';
import { sandboxFiles } from './sandbox-files.ts';
import { sandboxStdio } from './sandbox-stdio.ts';
import { sandboxDropTarget } from './sandbox-user.ts';

/**
 * Processes and threads one trust domain's sandbox may have at once
 * (RLIMIT_NPROC). A Node child with its workers needs a few dozen; a tool
 * may start a few Node processes of its own (about ten threads each).
 * Counted per uid: under a root host each domain's sandboxes run as a uid
 * of their own; otherwise the sandbox is a user namespace of its own,
 * which Linux 5.14+ counts apart from the host user's other processes.
 */
export const SANDBOX_MAX_TASKS = 256;

/** The trust domain a sandbox launcher starts sandboxes for. */
export interface SandboxDomain {
  /** The domain's key (registry.ts): its uid under a root host and its fsWrite spaces come from it. */
  key: string;
  /** Folders of fsWrite that every module shares, on purpose (`permissions.fsWriteShared`). */
  fsWriteShared: readonly string[];
}

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
    private readonly domain: SandboxDomain = { key: 'sandbox', fsWriteShared: [] },
  ) {}

  async launch(spec: ChildSpec): Promise<ChildLaunch> {
    const dropTo = sandboxDropTarget(this.domain.key);
    // Under a root host the limit is set on bwrap (root is not counted; the sandbox's own uid is once it switches to it).
    const innerLimit = dropTo === undefined ? innerNprocLimit() : undefined;
    const [nodeFiles, limitFiles, sandboxEntry, net] = await Promise.all([
      nodeRuntimeFiles(),
      innerLimit ? runtimeFilesOf(innerLimit[0]!) : [],
      sandboxEntryFile(),
      this.#netPlan(),
    ]);
    const entry = spec.nodeArgs.at(-1)!;
    const flags = spec.nodeArgs.slice(0, -1);
    const plan = JSON.stringify({
      ...(net ? { socket: SANDBOX_SOCKET, rules: net.rules } : { rules: [] }),
      ...(dropTo ? { dropTo } : {}),
    });
    const { shared, spaces } = writeSpaces(spec.writePaths, this.domain.fsWriteShared, this.domain.key, dropTo);
    const files = sandboxFiles();
    const stdio = await sandboxStdio();
    const options = childSpawnOptions(spec, stdio.stdout, stdio.stderr);
    // bwrap reads the filter from a descriptor of its own (after the channel's) and closes it before the child starts.
    const seccomp = files.seccomp !== undefined ? openSync(files.seccomp, 'r') : undefined;
    const seccompFd = seccomp !== undefined ? (options.stdio as unknown[]).length : undefined;
    if (seccomp !== undefined) options.stdio = [...(options.stdio as unknown[]), seccomp] as typeof options.stdio;
    const layout = {
      runtimeFiles: [...new Set([...nodeFiles, ...limitFiles])],
      readOnly: [...spec.readPaths, sandboxEntry, entry],
      writable: shared,
      writableBinds: spaces,
      generated: net?.generated ?? [],
      lowPorts: needsLowPorts(this.targets),
      privileged: dropTo !== undefined,
      // As much as the call may use of memory: a tmpfs holds host RAM outside the data cap.
      tmpBytes: spec.maxMemoryMb * 1024 * 1024,
      workingDirectory: process.cwd(),
      procCounters: files.procCounters,
      ...(seccompFd !== undefined ? { seccompFd } : {}),
    };
    const inner = [...(innerLimit ?? []), spec.node, ...flags, sandboxEntry, plan, entry];
    const { command, args } = withLimits(
      spec,
      this.bwrap,
      bwrapArgs(layout, inner),
      dropTo ? [`--nproc=${SANDBOX_MAX_TASKS}`] : [],
    );
    const cleanup = () => {
      void stdio.close();
      if (seccomp !== undefined) closeSync(seccomp);
    };
    return { command, args, options, cleanup, signalsAsExitCodes: true, stderr: stdio.stderrArrives };
  }

  async close(): Promise<void> {
    const net = await this.#net?.catch(() => undefined);
    this.#net = undefined;
    await net?.close();
  }

  #netPlan(): Promise<NetPlan | undefined> {
    // A start that failed (no descriptor, no disk space for a moment) is not kept: the next launch starts it again.
    this.#net ??=
      this.targets.length === 0
        ? Promise.resolve(undefined)
        : startNet(this.targets).catch((error: unknown) => {
            this.#net = undefined;
            throw error;
          });
    return this.#net;
  }
}

/**
 * For a sandbox in a user namespace of its own (a host that is not root):
 * prlimit inside it, so the limit counts that namespace's processes only
 * (Linux 5.14+; set on bwrap, it would count all of the host user's).
 * Undefined where the kernel is older or prlimit is missing.
 */
export function innerNprocLimit(kernel = release()): string[] | undefined {
  const [major = 0, minor = 0] = kernel.split('.').map((part) => Number.parseInt(part, 10));
  const prlimit = findPrlimit();
  if (!prlimit || major < 5 || (major === 5 && minor < 14)) return undefined;
  return [prlimit, `--nproc=${SANDBOX_MAX_TASKS}`];
}

function sandboxEntryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableRuntime(fileURLToPath(new URL(`./sandbox-child${extension}`, import.meta.url)));
}
