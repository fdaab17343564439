import { spawn, type ChildProcess } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolErrors, errorMessage } from '../errors.ts';
import { toRunnableModule } from '../pool/module-compiler.ts';
import type { ModuleTask } from '../pool/protocol.ts';
import type { RunJob, RunOutcome } from '../runner.ts';
import type { ToolInfo } from '../tool-info.ts';
import type { HostFunctions } from '../tool.ts';
import { processLauncher, type ChildLauncher, type ChildSpec } from './child-launcher.ts';
import type { ChildInit, ChildToHost, HostToChild } from './process-protocol.ts';
import type { PrepareLimits, ToolTier } from './tier.ts';

export interface ProcessTierOptions extends Omit<ChildInit, 'hostFunctionNames'> {
  hostFunctions: HostFunctions;
  /** How the child is started (default: `processLauncher`, prlimit + node; the sandbox tier wraps it in bwrap). */
  launcher?: ChildLauncher;
  /** Flags of the child's own Node process, before its entry file: its permission flags. */
  childFlags?: string[];
  /** What the child must read and write besides Node itself; see `ChildSpec`. */
  readPaths?: string[];
  writePaths?: string[];
  net?: boolean | readonly string[];
}

/**
 * Room for Node itself and its worker threads on top of `maxMemoryMb`,
 * since the cap covers the whole child process.
 */
const RUNTIME_ALLOWANCE_MB = 128;
const CLOSE_GRACE_MS = 2_000;

/**
 * Runs module tools in worker threads of a child Node process, one child
 * per memory limit, started on first use and reused. The child has a clean
 * environment and a cap on its whole data segment (Buffers included), so a
 * tool that kills its process, exhausts memory or crashes natively takes
 * down only the child; the calls running there get error results and the
 * next call starts a fresh child.
 */
export class ProcessTier implements ToolTier {
  readonly #children = new Map<number, ToolProcess>();

  constructor(private readonly options: ProcessTierOptions) {}

  describe(ref: ModuleTask): Promise<ToolInfo> {
    return this.#child(this.options.defaultMemoryMb).describe(ref);
  }

  prepare(ref: ModuleTask, raw: Record<string, unknown>, limits: PrepareLimits): Promise<Record<string, unknown>> {
    return this.#child(limits.maxMemoryMb).prepare(ref, raw, limits);
  }

  execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    return this.#child(job.limits.maxMemoryMb).execute(job, ref);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#children.values()].map((child) => child.close()));
    this.#children.clear();
  }

  #child(maxMemoryMb: number): ToolProcess {
    let child = this.#children.get(maxMemoryMb);
    if (!child) {
      child = new ToolProcess(this.options, maxMemoryMb);
      this.#children.set(maxMemoryMb, child);
    }
    return child;
  }
}

type Pending = {
  resolve: (message: ChildToHost) => void;
  onUpdate?: RunJob['onUpdate'];
};

/** One child process (respawned after it dies) and the requests in flight in it. */
class ToolProcess {
  #process: Promise<ChildProcess> | undefined;
  #pid: number | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closing = false;

  constructor(
    private readonly options: ProcessTierOptions,
    private readonly maxMemoryMb: number,
  ) {}

  async describe(ref: ModuleTask): Promise<ToolInfo> {
    const id = this.#nextId++;
    const reply = await this.#request({ type: 'describe', id, ref });
    if (reply.type === 'described') return reply.info;
    throw new Error(reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async prepare(ref: ModuleTask, raw: Record<string, unknown>, limits: PrepareLimits): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const reply = await this.#request({ type: 'prepare', id, ref, raw, limits });
    if (reply.type === 'prepared') return reply.args;
    throw new Error(reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart() };
    const id = this.#nextId++;
    // The child runs the two-step stop itself; the host only passes the abort on.
    const onAbort = () => this.#send({ type: 'abort', id });
    job.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { callId, args, limits } = job;
      const reply = await this.#request({ type: 'execute', id, ref, callId, args, limits }, job.onUpdate);
      if (reply.type === 'failed') return { ok: false, error: reply.error };
      if (reply.type !== 'executed') return { ok: false, error: ToolErrors.workerCrashed('unexpected reply') };
      return withProcessMemoryMessage(reply.outcome, this.maxMemoryMb);
    } finally {
      job.signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    const child = await this.#process?.catch(() => undefined);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.#send({ type: 'close' });
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  async #request(request: HostToChild & { id: number }, onUpdate?: RunJob['onUpdate']): Promise<ChildToHost> {
    const { id } = request;
    if (this.#closing) return { type: 'failed', id, error: ToolErrors.poolClosed() };
    const reply = new Promise<ChildToHost>((resolve) => this.#pending.set(id, { resolve, ...(onUpdate ? { onUpdate } : {}) }));
    try {
      const child = await this.#started();
      this.#refWhileBusy(child);
      child.send(request);
    } catch (error) {
      this.#pending.delete(id);
      return { type: 'failed', id, error: ToolErrors.workerCrashed(`the isolation process could not start: ${errorMessage(error)}`) };
    }
    return reply;
  }

  #send(message: HostToChild): void {
    void this.#process?.then((child) => child.connected && child.send(message)).catch(() => undefined);
  }

  #started(): Promise<ChildProcess> {
    this.#process ??= this.#spawn().catch((error: unknown) => {
      this.#process = undefined;
      throw error;
    });
    return this.#process;
  }

  async #spawn(): Promise<ChildProcess> {
    const launcher = this.options.launcher ?? processLauncher;
    const launch = await launcher.launch(await this.#spec());
    const child = spawn(launch.command, launch.args, launch.options);
    this.#pid = child.pid;
    child.on('message', (message: ChildToHost) => this.#onMessage(message, child));
    child.on('exit', (code, signal) => this.#onExit(child, code, signal));
    child.once('exit', () => launch.cleanup?.());
    child.on('error', () => undefined); // a failed spawn also emits 'exit'
    const init = childInit(this.options);
    await new Promise<void>((resolve, reject) => {
      child.once('message', (message: ChildToHost) => (message.type === 'ready' ? resolve() : reject(new Error('bad handshake'))));
      child.once('exit', (code, signal) => reject(new Error(`it exited (${signal ?? code}) during start`)));
      child.send({ type: 'init', init });
    });
    return child;
  }

  async #spec(): Promise<ChildSpec> {
    const entry = await childEntryFile();
    const { env, childFlags = [], readPaths = [], writePaths = [], net } = this.options;
    return {
      node: process.execPath,
      nodeArgs: [...childFlags, entry],
      env,
      memoryCapBytes: (this.maxMemoryMb + RUNTIME_ALLOWANCE_MB) * 1024 * 1024,
      maxMemoryMb: this.maxMemoryMb,
      readPaths: [entry, ...readPaths],
      writePaths,
      ...(net !== undefined ? { net } : {}),
    };
  }

  #onMessage(message: ChildToHost, child: ChildProcess): void {
    if (message.type === 'ready') return;
    if (message.type === 'host-call') return void this.#answerHostCall(message, child);
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    if (message.type === 'update') return void pending.onUpdate?.(message.partial);
    this.#pending.delete(message.id);
    this.#refWhileBusy(child);
    pending.resolve(message);
  }

  async #answerHostCall(message: Extract<ChildToHost, { type: 'host-call' }>, child: ChildProcess): Promise<void> {
    const fn = this.options.hostFunctions[message.name] as ((...args: unknown[]) => unknown) | undefined;
    let reply: HostToChild;
    try {
      if (!fn) throw new Error(`no host function "${message.name}"`);
      reply = { type: 'host-reply', id: message.id, ok: true, value: await fn(...message.args) };
    } catch (error) {
      reply = { type: 'host-reply', id: message.id, ok: false, error: errorMessage(error) };
    }
    if (child.connected) child.send(reply);
  }

  /** Every request still in the dead child gets an error result; the next request starts a new child. */
  #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#pid !== child.pid) return; // an older child; its requests were already failed
    this.#process = undefined;
    this.#pid = undefined;
    const error = this.#closing ? ToolErrors.poolClosed() : ToolErrors.processDied(signal, code);
    for (const [id, pending] of this.#pending) pending.resolve({ type: 'failed', id, error });
    this.#pending.clear();
  }

  /** The IPC channel keeps the host alive only while calls are in flight. */
  #refWhileBusy(child: ChildProcess): void {
    const channel = (child as ChildProcess & { channel?: { ref(): void; unref(): void } }).channel;
    if (this.#pending.size > 0) {
      child.ref();
      channel?.ref();
    } else {
      child.unref();
      channel?.unref();
    }
  }
}

/** The process cap shows up as a failed Buffer allocation inside the tool: name the limit. */
function withProcessMemoryMessage(outcome: RunOutcome, maxMemoryMb: number): RunOutcome {
  if (!outcome.ok && /Array buffer allocation failed/.test(outcome.error)) {
    return { ok: false, error: ToolErrors.memoryLimit(maxMemoryMb) };
  }
  return outcome;
}

/** What the child is told at start: only the fields of `ChildInit`, never the host functions themselves. */
function childInit(options: ProcessTierOptions): ChildInit {
  const { minWorkers, maxWorkers, idleTimeoutMs, env, execArgv, defaultMemoryMb, loadTimeoutMs, hostFunctions } = options;
  return { minWorkers, maxWorkers, idleTimeoutMs, env, execArgv, defaultMemoryMb, loadTimeoutMs, hostFunctionNames: Object.keys(hostFunctions) };
}

async function childEntryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableModule(fileURLToPath(new URL(`./process-child${extension}`, import.meta.url)));
}
