import type { RunJob, RunOutcome, RunUsage } from './runner.ts';
import type { Isolation } from './tool.ts';

// The seam between the executor and machines elsewhere: with
// `createExecutor({ remote })` the host still describes, prepares,
// validates and approves every call of a module tool, runs the hooks and
// sends the events; only `execute` goes to the remote runner. A runner
// lives below the registry, which builds each module tool's `execute` on
// it; `toolpool/bullmq`'s `remoteRunner()` is one.

/** One call, as the host hands it to a remote runner. */
export interface RemoteCall extends RunJob {
  /** The tool's name. */
  tool: string;
  /** The tool module's content hash (`executor.metadata`'s `moduleHash`): a machine with another version must refuse the call. */
  moduleHash: string;
  /** The tier the host would run the tool in: a machine must not run it in a weaker one. */
  isolation: Isolation;
}

/** What became of a remote call: its result, or an error text (a remote runner never rejects for what a call did). */
export type RemoteOutcome = RunOutcome;

/** What the remote call cost, as the machine that ran it measured it. */
export type RemoteUsage = RunUsage;

/** Runs module tools' `execute` elsewhere; the executor closes it when it closes. */
export interface RemoteRunner {
  execute(call: RemoteCall): Promise<RemoteOutcome>;
  close(): Promise<void>;
}
