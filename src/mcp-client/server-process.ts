import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { describeExit, exitStatus, killGroup, type ExitStatus } from '../isolation/process/exit-status.ts';
import type { ServerLaunch } from './launch.ts';

/** How much of a server's stderr is kept for messages. */
const STDERR_TAIL_CHARS = 4_096;
/** After the server exited, how long its stdout and stderr may take to be read to the end. */
const DRAIN_MS = 500;

/** How a server process ended: its exit status, or why it never started. */
export type ServerEnd = { status: ExitStatus; startError?: undefined } | { status?: undefined; startError: Error };

/**
 * One started MCP server process: stdin and stdout for the protocol, the
 * tail of its stderr (read continuously, so a chatty server never blocks on
 * a full pipe; never copied to this process's own descriptors), and its end.
 * It leads a process group of its own: a kill takes everything it started
 * there; in a PID namespace (the sandbox, or the process tier's bwrap) its
 * end takes every process left in the namespace.
 */
export class ServerProcess {
  readonly #child: ChildProcess;
  readonly #launch: ServerLaunch;
  /** Settles once the process has ended and its output was read (or could not be within DRAIN_MS). */
  readonly ended: Promise<ServerEnd>;
  #end: ServerEnd | undefined;
  #stderr = '';

  constructor(launch: ServerLaunch) {
    this.#launch = launch;
    this.#child = spawn(launch.command, launch.args, launch.options);
    this.#child.stderr!.on(
      'data',
      (chunk: Buffer) => (this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS)),
    );
    this.ended = new Promise<ServerEnd>((resolve) => {
      this.#child.once('error', (error) => resolve({ startError: error }));
      this.#child.once('exit', (code, signal) => {
        // What it left running in its group goes with it; its pipes then close too.
        killGroup(this.#child);
        void drained(this.#child).then(() => resolve({ status: exitStatus(code, signal, launch.signalsAsExitCodes) }));
      });
    }).then((end) => {
      this.#end = end;
      void launch.close?.();
      return end;
    });
    this.#sendPlan();
  }

  get stdin(): Writable {
    return this.#child.stdin!;
  }

  get stdout(): Readable {
    return this.#child.stdout!;
  }

  /** How it ended, once it has. */
  get end(): ServerEnd | undefined {
    return this.#end;
  }

  /** The last few KiB it wrote to stderr. */
  get stderrTail(): string {
    return this.#stderr;
  }

  /**
   * Whether it keeps this process's event loop alive: only while a call or
   * a start waits for it, as toolpool's own child processes do, so a host
   * that is done (and forgot close()) can still exit.
   */
  hold(busy: boolean): void {
    const method = busy ? 'ref' : 'unref';
    this.#child[method]();
    for (const stream of this.#child.stdio) {
      // A closed stream (fd 3, once the plan is sent) has no handle: Node's unref() would then wait for a
      // 'connect' that never comes, adding one listener per call.
      if (stream && !stream.destroyed) (stream as { ref?(): void; unref?(): void })[method]?.();
    }
  }

  /** Kills its process group (and with it a sandbox or PID namespace) at once. */
  kill(): void {
    if (this.#end) return;
    killGroup(this.#child);
  }

  /** Asks it to stop by closing its stdin (as MCP's stdio transport says), then kills it after `graceMs`. Bounded. */
  async stop(graceMs: number): Promise<void> {
    if (this.#end) return;
    this.#child.stdin?.end();
    const timer = setTimeout(() => this.kill(), graceMs);
    await this.ended;
    clearTimeout(timer);
  }

  /** The plan the sandbox entry reads from fd 3, then fd 3 is closed. */
  #sendPlan(): void {
    const channel = this.#child.stdio[3] as Writable | null | undefined;
    if (!channel) return;
    channel.on('error', () => undefined); // a server that is gone already
    channel.end(this.#launch.plan ?? '');
  }
}

/** `exit code 3`, `signal SIGKILL`, or why it could not start. */
export function describeEnd(end: ServerEnd): string {
  return end.status ? describeExit(end.status) : `it could not start: ${end.startError.message}`;
}

function drained(child: ChildProcess): Promise<void> {
  const streams = [child.stdout, child.stderr].filter(
    (stream): stream is Readable => stream !== null && !stream.readableEnded && !stream.destroyed,
  );
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, DRAIN_MS);
    timer.unref();
    let open = streams.length;
    if (open === 0) return (clearTimeout(timer), resolve());
    for (const stream of streams) {
      stream.once('close', () => {
        if (--open === 0) clearTimeout(timer), resolve();
      });
    }
  });
}
