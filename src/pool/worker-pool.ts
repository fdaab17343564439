import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { expose } from 'comlink/dist/esm/comlink.mjs';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { ConfigErrors, ToolErrors, errorMessage, stopMessage } from '../errors.ts';
import type { ToolInfo } from '../tool-info.ts';
import type { RunJob, RunOutcome } from '../runner.ts';
import type { HostFunctions, ToolResult } from '../tool.ts';
import { CallTable } from './call-table.ts';
import { toRunnableModule } from './module-compiler.ts';
import {
  WORKER_HELLO,
  type AbortMessage,
  type PreloadMessage,
  type DescribeReply,
  type ModuleTask,
  type ExecuteReply,
  type PrepareReply,
  type UpdateMessage,
  type WorkerHello,
  type WorkerTask,
} from './protocol.ts';
import { StopTimer, type StopReason, type Stoppable } from '../stop-timer.ts';
import type { ResolvedLimits } from '../limits.ts';

export interface WorkerPoolOptions {
  maxMemoryMb: number;
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  /** The workers' whole `process.env`. */
  env: Record<string, string>;
  execArgv: string[];
  hostFunctions: HostFunctions;
  /** How long importing a tool module to read its definition may take. */
  loadTimeoutMs: number;
  /** V8 code range per worker (the process tier sets it: Node 24+ would reserve 512 MB each under its memory cap). */
  codeRangeSizeMb?: number;
}


/** Calls in flight per pool before further calls wait for a slot in the shared call table. */
const CALL_TABLE_SLOTS = 1024;

export function defaultWorkerCount(): number {
  return Math.max(2, availableParallelism());
}

/**
 * One piscina pool for one limits profile (workers of a pool share their
 * heap limit). Owns the per-worker channels, the shared call table, the
 * two-step stop for timeouts and aborts, and the classification of every
 * way a worker can fail.
 */
export class WorkerPool {
  readonly #piscina: Piscina;
  readonly #table = CallTable.create(CALL_TABLE_SLOTS);
  readonly #ports = new Map<number, MessagePort>();
  readonly #active = new Map<number, PoolCall>();
  readonly #helloWaiters = new Map<number, (port: MessagePort) => void>();
  #acks: PoolCall[] = [];
  /** The tool modules this pool has run (one ref object per tool), for preloading new workers. */
  readonly #modules = new Set<ModuleTask>();
  #nextRunId = 1;
  readonly #hostFunctionNames: string[];
  #closing = false;

  private constructor(workerFile: string, private readonly options: WorkerPoolOptions) {
    this.#hostFunctionNames = Object.keys(options.hostFunctions);
    this.#piscina = new Piscina({
      filename: workerFile,
      minThreads: Math.min(options.minWorkers, options.maxWorkers),
      maxThreads: options.maxWorkers,
      idleTimeout: options.idleTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb, ...(options.codeRangeSizeMb ? { codeRangeSizeMb: options.codeRangeSizeMb } : {}) },
      env: options.env,
      execArgv: options.execArgv,
      workerData: { callTable: this.#table.memory },
      // Atomics.waitAsync keeps an idle worker's event loop turning, so a
      // tool's leftover timers fire (and are attributed) while it waits, and
      // a new worker can import its tools before its first call. piscina's
      // default ('sync') blocks idle workers; it measured ~10% more
      // throughput with 100 calls in flight (see BENCHMARKS.md).
      atomics: 'async',
    });
    this.#piscina.on('message', (message: unknown) => this.#onWorkerMessage(message));
    // Without a listener an 'error' event would kill the host; errors here are
    // already turned into call results, so a stray one is only reported.
    this.#piscina.on('error', (error: unknown) => process.emitWarning(`toolpool: worker pool error: ${errorMessage(error)}`));
  }

  static async start(options: WorkerPoolOptions): Promise<WorkerPool> {
    return new WorkerPool(await workerEntryFile(), options);
  }

  async describe(ref: ModuleTask): Promise<ToolInfo> {
    const timeoutMs = this.options.loadTimeoutMs;
    const task: WorkerTask = { op: 'describe', ...ref };
    const reply = (await this.#runBounded(task, timeoutMs, ConfigErrors.loadTimedOut(ref.source, timeoutMs))) as DescribeReply;
    if (!reply.ok) throw new Error(reply.error);
    this.#modules.add(ref);
    return reply.info;
  }

  async prepare(ref: ModuleTask, raw: Record<string, unknown>, toolTimeoutMs: number): Promise<Record<string, unknown>> {
    const task: WorkerTask = { op: 'prepare', ...ref, raw };
    // A worker that has not imported the module yet does it first.
    const timeoutMs = toolTimeoutMs + this.options.loadTimeoutMs;
    const reply = (await this.#runBounded(task, timeoutMs, ToolErrors.prepareTimedOut(timeoutMs))) as PrepareReply;
    if (!reply.ok) throw new Error(reply.error);
    return reply.args;
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart() };
    this.#modules.add(ref);
    const free = this.#table.acquire();
    const slot = typeof free === 'number' ? free : await free;
    const call = new PoolCall(this.#nextRunId++, slot, job, ref, this.#table, this);
    this.#active.set(call.runId, call);
    // The slot is reused only once piscina is done with the task, even when
    // the call settled earlier (cancelled before it started).
    const release = () => this.#table.release(slot);
    (this.#run(call.task(this.#hostFunctionNames)) as Promise<ExecuteReply>).then(
      (value) => {
        release();
        call.settle({ value });
      },
      (error: unknown) => {
        release();
        call.settle({ error });
      },
    );
    const settled = await call.settled;
    call.dispose();
    if ('value' in settled) {
      const draining = this.#drainUpdates(settled.value, call);
      if (draining) await draining;
    }
    this.#active.delete(call.runId);
    return this.#closing && 'error' in settled ? { ok: false, error: ToolErrors.poolClosed() } : call.outcome(settled);
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#piscina.destroy();
    for (const port of this.#ports.values()) port.close();
    this.#ports.clear();
  }

  #run(task: WorkerTask): Promise<unknown> {
    return this.#piscina.run(task);
  }

  /**
   * Loading a module and `prepareArguments` run module code too, so they
   * get a deadline: a module that never finishes importing must not hang
   * createExecutor. Past it, piscina terminates the worker.
   */
  async #runBounded(task: WorkerTask, timeoutMs: number, message: string): Promise<unknown> {
    try {
      return await this.#piscina.run(task, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw (error as Error)?.name === 'AbortError' ? new Error(message) : error;
    }
  }

  /**
   * The hard kill: terminate the thread running the call. Piscina sees the
   * worker exit, fails its task and starts a replacement. (Passing an
   * AbortSignal to piscina would do the same but costs every call ~7 µs.)
   */
  terminateThread(threadId: number): void {
    void this.#piscina.threads.find((worker) => worker.threadId === threadId)?.terminate();
  }

  #helloFrom(threadId: number): Promise<MessagePort> {
    return new Promise((resolve) => this.#helloWaiters.set(threadId, resolve));
  }

  #onWorkerMessage(message: unknown): void {
    if (typeof message !== 'object' || message === null || !(WORKER_HELLO in message)) return;
    const { threadId, port, hostPort } = message as WorkerHello & { port: MessagePort; hostPort: MessagePort };
    this.#ports.set(threadId, port);
    this.#helloWaiters.get(threadId)?.(port);
    this.#helloWaiters.delete(threadId);
    port.on('message', (update: UpdateMessage) => this.#active.get(update.runId)?.receive(update.partial));
    port.on('close', () => this.#ports.delete(threadId));
    port.unref();
    // A replacement worker (after a crash or a kill) imports the tools now,
    // not when a call arrives: importing a module and its packages can take
    // a hundred milliseconds and more.
    if (this.#modules.size > 0) port.postMessage({ preload: [...this.#modules] } satisfies PreloadMessage);
    expose(this.options.hostFunctions, nodeEndpoint(hostPort));
    hostPort.unref();
  }

  /**
   * Updates travel on the worker's channel, the reply on piscina's: the
   * reply says how many updates were posted, and any still queued are read
   * synchronously now, so no update can ever follow its call's end.
   */
  #drainUpdates(reply: ExecuteReply, call: PoolCall): Promise<void> | undefined {
    if ('cancelled' in reply || call.received >= reply.updates) return undefined;
    const port = this.#ports.get(reply.threadId);
    if (port) return void this.#readQueued(port, reply.updates, call);
    // A new worker's hello (with its channel) travels on another port than
    // its first reply and may not have been handled yet; it was sent first,
    // so it is already on its way.
    return this.#helloFrom(reply.threadId).then((arrived) => this.#readQueued(arrived, reply.updates, call));
  }

  #readQueued(port: MessagePort, updates: number, call: PoolCall): void {
    while (call.received < updates) {
      const entry = receiveMessageOnPort(port) as { message: UpdateMessage } | undefined;
      if (!entry) break;
      this.#active.get(entry.message.runId)?.receive(entry.message.partial);
    }
  }

  /**
   * Counts an update as consumed, on the next turn of the event loop rather
   * than now. A worker posts while fewer than its window are unconsumed; if
   * updates were acknowledged as soon as their listeners ran, a flooding
   * worker would refill the port while the host is still reading it, and
   * the host would read thousands of messages in one turn without letting
   * its event loop tick. Deferred, one turn reads at most a window.
   */
  acknowledgeLater(call: PoolCall): void {
    this.#acks.push(call);
    if (this.#acks.length === 1) setImmediate(() => this.#flushAcks());
  }

  #flushAcks(): void {
    const acks = this.#acks;
    this.#acks = [];
    for (const call of acks) if (this.#active.get(call.runId) === call) this.#table.markConsumed(call.slot);
  }

  /** Step one of a stop: every worker hears it; the one running the call fires its signal. */
  broadcastAbort(message: AbortMessage): void {
    for (const port of this.#ports.values()) port.postMessage(message);
  }
}

/** What a call may ask of its pool. */
interface PoolControls {
  broadcastAbort(message: AbortMessage): void;
  terminateThread(threadId: number): void;
  acknowledgeLater(call: PoolCall): void;
}

type Settled = { value: ExecuteReply } | { error: unknown } | { cancelledBeforeStart: true };

/** One call of this pool: its slot, its updates, and how it was stopped if it was. */
class PoolCall implements Stoppable {
  received = 0;
  /** Resolves with the first of: the worker's reply, its failure, a cancel before start. */
  readonly settled: Promise<Settled>;
  settle!: (settled: Settled) => void;
  readonly limits: ResolvedLimits;
  readonly #stopTimer: StopTimer;

  constructor(
    readonly runId: number,
    readonly slot: number,
    private readonly job: RunJob,
    private readonly ref: ModuleTask,
    private readonly table: CallTable,
    private readonly controls: PoolControls,
  ) {
    this.settled = new Promise((resolve) => (this.settle = resolve));
    this.limits = job.limits;
    this.#stopTimer = new StopTimer(this, job.signal);
  }

  startedAt(): number {
    return this.table.startedAt(this.slot);
  }

  cancelIfQueued(): boolean {
    if (!this.table.cancelBeforeStart(this.slot)) return false;
    this.settle({ cancelledBeforeStart: true });
    return true;
  }

  requestStop(reason: StopReason): void {
    this.controls.broadcastAbort({ runId: this.runId, reason });
  }

  kill(): void {
    this.controls.terminateThread(this.table.threadId(this.slot));
  }

  task(hostFunctions: string[]): WorkerTask {
    const { callId, args, limits } = this.job;
    return { op: 'execute', ...this.ref, callId, args, runId: this.runId, slot: this.slot, maxResultBytes: limits.maxResultBytes, hostFunctions };
  }

  receive(partial: ToolResult): void {
    this.received++;
    if (this.#stopTimer.stopped) return this.controls.acknowledgeLater(this);
    const delivered = this.job.onUpdate(partial);
    // Flow control: the worker sees an update as consumed once listeners are done with it.
    if (delivered instanceof Promise) void delivered.finally(() => this.controls.acknowledgeLater(this));
    else this.controls.acknowledgeLater(this);
  }

  outcome(settled: Settled): RunOutcome {
    const error = 'error' in settled ? settled.error : undefined;
    if (isOutOfMemory(error)) return { ok: false, error: ToolErrors.memoryLimit(this.job.limits.maxMemoryMb) };
    const stop = this.#stopTimer.stopped;
    if (stop) return { ok: false, error: stopMessage(stop.reason, stop.how, this.job.limits.timeoutMs) };
    if ('value' in settled && !('cancelled' in settled.value)) {
      const reply = settled.value;
      return reply.ok ? { ok: true, result: reply.result } : { ok: false, error: reply.error };
    }
    return { ok: false, error: crashMessage(error) };
  }

  dispose(): void {
    this.#stopTimer.dispose();
  }
}

function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

function crashMessage(error: unknown): string {
  const exited = /worker exited with code: (-?\d+)/.exec(errorMessage(error));
  if (exited) return ToolErrors.workerExited(Number(exited[1]));
  return ToolErrors.workerCrashed(errorMessage(error));
}

/**
 * The worker entry as a file a plain worker can load: the built JavaScript
 * next to this file in a package, or the TypeScript source compiled on the
 * fly when toolpool itself runs from source (tests, tsx).
 */
async function workerEntryFile(): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableModule(join(workerEntryDirectory(), 'workers', `tool-worker${extension}`));
}

/** The package folder holding the worker entry (`workers/`) and the library code it imports (`src/`). */
function workerEntryDirectory(): string {
  return fileURLToPath(new URL('../../', import.meta.url));
}

/**
 * What a permission-restricted worker must read to load the worker entry:
 * the built package folder, or nothing extra when running from TypeScript
 * sources (the entry is then compiled into the compile cache).
 */
export function workerEntryReadPaths(): string[] {
  return extname(fileURLToPath(import.meta.url)) === '.ts' ? [] : [workerEntryDirectory()];
}
