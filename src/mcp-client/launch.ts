import type { SpawnOptions } from 'node:child_process';
import { pidNamespaceArgs, pidNamespaceSupport } from '../isolation/process/pid-namespace.ts';

/** How to start one MCP server: what `child_process.spawn` gets, and what to do around it. */
export interface ServerLaunch {
  command: string;
  args: string[];
  /** stdin and stdout carry the protocol, stderr is read for its tail; always detached (a process group of its own). */
  options: SpawnOptions;
  /** Written to the child's fd 3, which is then closed (the sandbox entry's plan). */
  plan?: string;
  /** The launcher reports a death by signal as exit code 128 + N (bubblewrap does). */
  signalsAsExitCodes: boolean;
  /** Undoes what the launch set up (a network proxy); called once the server is gone. */
  close?: () => Promise<void>;
}

/** What a launch needs besides the server's own configuration. */
export interface LaunchTarget {
  /** The command, resolved to an absolute real path. */
  program: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  /** The working folder, absolute. */
  cwd: string;
}

/**
 * A server of `isolation: 'process'`: the program itself, with the rights
 * of this process's user, in a process group of its own (so a kill reaches
 * what it started) and, where bubblewrap works, in a PID namespace of its
 * own, whose end takes every process left in it along. Its environment is
 * its `env` only.
 */
export async function processLaunch(target: LaunchTarget): Promise<ServerLaunch> {
  const bwrap = await pidNamespaceSupport();
  const argv = [target.program, ...target.args];
  return {
    command: bwrap ?? target.program,
    args: bwrap ? pidNamespaceArgs(argv) : [...target.args],
    options: { env: { ...target.env }, cwd: target.cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true },
    signalsAsExitCodes: bwrap !== undefined,
  };
}
