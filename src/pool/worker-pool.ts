import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessagePort, type Worker } from 'node:worker_threads';
import { ConfigErrors, ToolErrors, errorMessage } from '../errors.ts';
import type { ToolInfo } from '../tool-info.ts';
import type { RunJob, RunOutcome } from '../runner.ts';
import type { HostFunctions } from '../tool.ts';
import { HostFunctionTable } from './host-functions.ts';
import { toRunnableModule } from './module-compiler.ts';
import { PoolCall, type CallControls } from './pool-call.ts';
import { WORKER_HELLO, type DescribeReply, type ModuleTask, type PrepareReply, type ApprovalReply, type WorkerTask } from './protocol.ts';
import { randomRunId } from './run-ids.ts';
import { WorkerWatch } from './worker-watch.ts';
import { guardNodeWorkerMessages, guardPiscinaReplies, onWorkerViolation } from './reply-guards.ts';
import { WorkerChannel, type ChannelOwner } from './worker-channel.ts';

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

/** A call whose task no worker started (its worker died first, or was retired) is handed to piscina again, this often at most. */
const MAX_ATTEMPTS = 3;
/** How long close() waits for threads to end; a thread blocked in native code (a sync sleep, a stdin read) is abandoned after it. */
const CLOSE_BOUND_MS = 2_000;
/** piscina's ready message, which it posts on the parent port after ours. */
const PISCINA_READY = '_WORKER_READY';

export function defaultWorkerCount(): number {
  return Math.max(2, availableParallelism());
}

/**
 * One piscina pool for one limits profile (workers of a pool share their
 * heap limit). piscina starts, replaces and reaps the workers and picks the
 * worker for each task; the host binds each worker's channel to its Worker
 * object and decides everything about a call from its own state (see
 * pool-call.ts and worker-channel.ts). Nothing in workerData is shared.
 */
export class WorkerPool implements ChannelOwner, CallControls {
  readonly hostFunctions: HostFunctionTable;
  readonly loadTimeoutMs: number;
  readonly #piscina: Piscina;
  readonly #channels = new Map<Worker, WorkerChannel>();
  /** Calls handed to piscina that no worker has started yet, by run id. */
  readonly #queued = new Map<number, PoolCall>();
  readonly #watch: WorkerWatch;
  #acks: PoolCall[] = [];
  /** The tool modules this pool has run (one ref object per tool), for preloading new workers. */
  readonly #modules = new Set<ModuleTask>();
  /** describe and prepare tasks in flight: they occupy a worker without a call the host can see. */
  untracked = 0;
  #closing = false;
  readonly #onWorker = (worker: Worker) => this.#adopt(worker);

  private constructor(workerFile: string, private readonly options: WorkerPoolOptions) {
    this.hostFunctions = new HostFunctionTable(options.hostFunctions);
    this.loadTimeoutMs = options.loadTimeoutMs;
    guardNodeWorkerMessages();
    this.#piscina = new Piscina({
      filename: workerFile,
      minThreads: Math.min(options.minWorkers, options.maxWorkers),
      maxThreads: options.maxWorkers,
      idleTimeout: options.idleTimeoutMs,
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb, ...(options.codeRangeSizeMb ? { codeRangeSizeMb: options.codeRangeSizeMb } : {}) },
      env: options.env,
      execArgv: options.execArgv,
      // Atomics.waitAsync keeps an idle worker's event loop turning, so a
      // tool's leftover timers fire (and are attributed) while it waits, and
      // a new worker can import its tools before its first call.
      atomics: 'async',
    });
    // Without a listener an 'error' event would kill the host; errors here are
    // already turned into call results, so a stray one is only reported.
    this.#piscina.on('error', (error: unknown) => process.emitWarning(`toolpool: worker pool error: ${errorMessage(error)}`));
    // 'worker' is emitted on the next tick after a Worker is created, before it can post anything, so
    // listening only now still sees the workers piscina just started. Not before: when piscina's
    // constructor throws (Node 24+ refuses permission flags in execArgv), no listener must be left behind.
    process.on('worker', this.#onWorker);
    guardPiscinaReplies(this.#piscina);
    this.#watch = new WorkerWatch(this);
  }

  static async start(options: WorkerPoolOptions): Promise<WorkerPool> {
    return new WorkerPool(await workerEntryFile(), options);
  }

  async describe(ref: ModuleTask): Promise<ToolInfo> {
    const timeoutMs = this.options.loadTimeoutMs;
    const task: WorkerTask = { op: 'describe', ...ref };
    const reply = (await this.#runBounded(task, AbortSignal.timeout(timeoutMs), ConfigErrors.loadTimedOut(ref.source, timeoutMs))) as DescribeReply;
    if (!checkReply(reply)) throw new Error(ToolErrors.protocolViolation('a malformed describe reply'));
    if (!reply.ok) throw new Error(reply.error);
    this.#modules.add(ref);
    return reply.info;
  }

  async prepare(ref: ModuleTask, raw: Record<string, unknown>, toolTimeoutMs: number, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const task: WorkerTask = { op: 'prepare', ...ref, raw };
    // A worker that has not imported the module yet does it first.
    const timeoutMs = toolTimeoutMs + this.options.loadTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const bound = signal ? AbortSignal.any([timeout, signal]) : timeout;
    const message = () => (signal?.aborted ? ToolErrors.abortedBeforeStart() : ToolErrors.prepareTimedOut(timeoutMs));
    const reply = (await this.#runBounded(task, bound, message)) as PrepareReply;
    if (!checkReply(reply)) throw new Error(ToolErrors.protocolViolation('a malformed prepare reply'));
    if (!reply.ok) throw new Error(reply.error);
    return reply.args;
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, toolTimeoutMs: number): Promise<unknown> {
    const task: WorkerTask = { op: 'needsApproval', ...ref, args };
    // The same deadline as prepareArguments: it runs module code too.
    const timeoutMs = toolTimeoutMs + this.options.loadTimeoutMs;
    const reply = (await this.#runBounded(task, AbortSignal.timeout(timeoutMs), ToolErrors.prepareTimedOut(timeoutMs))) as ApprovalReply;
    if (!checkReply(reply)) throw new Error(ToolErrors.protocolViolation('a malformed needsApproval reply'));
    if (!reply.ok) throw new Error(reply.error);
    return reply.answer;
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart() };
    if (this.#closing) return { ok: false, error: ToolErrors.poolClosed() };
    this.#modules.add(ref);
    const call = new PoolCall(this.#newRunId(), job, ref, this);
    this.#queued.set(call.runId, call);
    this.#dispatch(call);
    this.#watch.wake();
    return call.done;
  }

  async close(): Promise<void> {
    this.#closing = true;
    process.off('worker', this.#onWorker);
    this.#watch.stop();
    for (const call of this.#queued.values()) call.fail(ToolErrors.poolClosed());
    for (const channel of this.#channels.values()) for (const call of channel.running.values()) call.fail(ToolErrors.poolClosed());
    const threads = this.#piscina.threads;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#piscina.destroy().catch(() => undefined),
      new Promise((resolve) => (bound = setTimeout(resolve, CLOSE_BOUND_MS))),
    ]);
    clearTimeout(bound);
    // A thread still running is blocked in native code: abandon it, so it cannot keep this process alive.
    for (const thread of threads) thread.unref();
    for (const channel of this.#channels.values()) channel.port.close();
    this.#channels.clear();
  }

  // ChannelOwner

  claim(runId: number): PoolCall | undefined {
    const call = this.#queued.get(runId);
    if (call) this.#queued.delete(runId);
    return call;
  }

  refused(runId: number): void {
    const call = this.#queued.get(runId);
    if (!call) return;
    if (call.taskDone) this.requeue(call, 'its worker was retiring');
    else call.refused = true;
  }

  forget(channel: WorkerChannel): void {
    if (this.#channels.get(channel.worker) === channel) this.#channels.delete(channel.worker);
  }

  // CallControls

  cancelQueued(call: PoolCall): void {
    // The host does not know which worker (if any) has the task yet: every worker hears it and the one that gets it skips it.
    for (const channel of this.#channels.values()) channel.post({ t: 'abort', runId: call.runId, reason: 'aborted' });
  }

  /**
   * Acknowledges consumed updates on the next turn of the event loop rather
   * than at once, so one turn of a flooding worker's messages costs one ack
   * per call, and the host's event loop ticks between windows.
   */
  acknowledgeLater(call: PoolCall): void {
    this.#acks.push(call);
    if (this.#acks.length === 1) setImmediate(() => this.#flushAcks());
  }

  #flushAcks(): void {
    const acks = this.#acks;
    this.#acks = [];
    for (const call of acks) {
      if (call.outcome || call.acked === call.consumed) continue;
      call.acked = call.consumed;
      call.channel?.post({ t: 'ack', runId: call.runId, consumed: call.consumed });
    }
  }

  // For the watch (worker-watch.ts).

  get channels(): Iterable<WorkerChannel> {
    return this.#channels.values();
  }

  get queued(): Iterable<PoolCall> {
    return this.#queued.values();
  }

  /** Hands a call no worker started to piscina again, or ends it when it has had its attempts. */
  requeue(call: PoolCall, why: string): void {
    if (call.outcome) return void this.#queued.delete(call.runId);
    if (this.#closing) return call.fail(ToolErrors.poolClosed());
    if (call.attempts >= MAX_ATTEMPTS) {
      this.#queued.delete(call.runId);
      return call.fail(ToolErrors.workerCrashed(`no worker could start the call (${why})`));
    }
    call.taskDone = false;
    this.#dispatch(call);
  }

  #dispatch(call: PoolCall): void {
    call.attempts++;
    this.#piscina.run(call.task(this.hostFunctions.names)).then(
      () => this.#taskDone(call),
      (error: unknown) => this.#taskFailed(call, error),
    );
  }

  /** piscina says the worker finished the task; the call's messages travel on the channel and may not have been read yet. */
  #taskDone(call: PoolCall): void {
    call.taskDone = true;
    if (call.outcome && !call.started) return void this.#queued.delete(call.runId);
    if (call.resultAt !== 0) return;
    if (call.refused) {
      call.refused = false;
      return this.requeue(call, 'its worker was retiring');
    }
    if (call.channel) {
      call.channel.drain();
      if (!call.outcome) call.channel.retire('its task ended without a result on its channel', true);
      return;
    }
    for (const channel of this.#channels.values()) channel.drain();
    // Still not started: its worker's hello may not have been read yet, or it broke the protocol. The watch decides.
    if (!call.started) this.#watch.unexplained(call);
  }

  #taskFailed(call: PoolCall, error: unknown): void {
    call.taskDone = true;
    if (call.started) return; // its channel saw the worker exit and ended the call
    this.requeue(call, errorMessage(error));
  }

  /** Every Worker of this process is seen here; this pool's own are bound by their first message. */
  #adopt(worker: Worker): void {
    if (!this.#piscina.threads.includes(worker)) return;
    let bound = false;
    const onMessage = (message: unknown) => {
      if (!bound && isHello(message)) {
        bound = true;
        return this.#bind(worker, message[WORKER_HELLO] === true ? (message.port as MessagePort) : undefined);
      }
      if (isPiscinaReady(message)) return;
      // A second hello, or anything else a tool posts on the parent port: never trusted.
      const channel = this.#channels.get(worker);
      if (channel) channel.retire('it posted on its parent port', true);
      else void worker.terminate();
    };
    worker.on('message', onMessage);
  }

  #bind(worker: Worker, port: MessagePort | undefined): void {
    if (!port) return void worker.terminate();
    const channel = new WorkerChannel(worker, port, this);
    this.#channels.set(worker, channel);
    onWorkerViolation(worker, (reason) => channel.retire(reason, true));
    // A replacement worker (after a crash or a kill) imports the tools now,
    // not when a call arrives: importing a module can take a hundred milliseconds and more.
    if (this.#modules.size > 0) channel.post({ t: 'preload', preload: [...this.#modules] });
  }

  #newRunId(): number {
    let id = randomRunId();
    while (this.#queued.has(id)) id = randomRunId();
    return id;
  }

  /** Loading a module and `prepareArguments` run module code too, so they get a deadline; past it, piscina terminates the worker. */
  async #runBounded(task: WorkerTask, signal: AbortSignal, message: string | (() => string)): Promise<unknown> {
    this.untracked++;
    try {
      return await this.#piscina.run(task, { signal });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw new Error(typeof message === 'string' ? message : message());
      throw error;
    } finally {
      this.untracked--;
    }
  }
}

function isHello(message: unknown): message is { [WORKER_HELLO]: unknown; port: unknown } {
  return typeof message === 'object' && message !== null && WORKER_HELLO in message && (message as { port?: unknown }).port instanceof MessagePort;
}

function isPiscinaReady(message: unknown): boolean {
  return typeof message === 'object' && message !== null && PISCINA_READY in message && Object.keys(message).length === 1;
}

function checkReply(reply: unknown): boolean {
  if (typeof reply !== 'object' || reply === null) return false;
  const { ok, error } = reply as { ok?: unknown; error?: unknown };
  return ok === true || (ok === false && typeof error === 'string');
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
