import { Piscina } from 'piscina';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessagePort, type Worker } from 'node:worker_threads';
import { ConfigErrors, ToolErrors, errorMessage } from '../../core/errors.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import type { RunJob, RunOutcome } from '../../core/runner.ts';
import type { HostFunctions } from '../../core/tool.ts';
import { HostFunctionTable } from './host-functions.ts';
import { runtimeFile, type RuntimeFile } from './module-compiler.ts';
import { CallQueue } from './call-queue.ts';
import { PoolCall, toolKeyOf, type CallControls } from './pool-call.ts';
import {
  WORKER_HELLO,
  type ApprovalReply,
  type DescribeReply,
  type ModuleTask,
  type PrepareReply,
  type WorkerTask,
} from './protocol.ts';
import { randomRunId } from './run-ids.ts';
import { StartCounter } from './start-counter.ts';
import { watchWorkerBirths } from './worker-births.ts';
import { forwardToolOutput, TOOL_OUTPUT_PREFIX } from './tool-output.ts';
import { ThreadBudget } from './thread-budget.ts';
import { WorkerWatch } from './worker-watch.ts';
import { guardNodeWorkerMessages, guardPiscinaReplies, onWorkerViolation } from './reply-guards.ts';
import { SEND_AHEAD, WorkerChannel, type ChannelOwner } from './worker-channel.ts';
import { ToolpoolError } from '../../core/error-codes.ts';

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
  /** V8 young generation of each worker (default: V8's own, which it sizes as it likes). */
  youngGenerationSizeMb?: number;
  /** The cap on threads this pool shares with the pools of other trust domains (default: its own, of maxWorkers). */
  budget?: ThreadBudget;
  /** Marks each line the workers print (default TOOL_OUTPUT_PREFIX; '' in a child process, whose host marks its output). */
  toolOutputPrefix?: string;
}

/** A call whose worker died before starting it is sent to a worker again, this often at most. */
const MAX_ATTEMPTS = 3;

interface PendingLease {
  since: number;
  /** Takes the lease's serve task out of piscina's queue (only while no thread could be running it: see #unstrand). */
  withdraw: AbortController;
}
/** A leased worker with no call gives its lease back after this long (or at once when piscina has tasks waiting for a worker). */
export const LEASE_LINGER_MS = 1_000;
/** How long close() waits for threads to end; a thread blocked in native code (a sync sleep, a stdin read) is abandoned after it. */
const CLOSE_BOUND_MS = 2_000;
/** piscina's ready message, which it posts on the parent port after ours. */
const PISCINA_READY = '_WORKER_READY';

export function defaultWorkerCount(): number {
  return Math.max(2, availableParallelism());
}

/**
 * One piscina pool for one limits profile (workers of a pool share their
 * heap limit). piscina starts, replaces and reaps the workers, and runs the
 * tasks that read a module (describe, prepare, needsApproval). Calls go
 * another way: the host leases workers from piscina (a `serve` task that
 * lasts while the host has calls for that worker) and sends each call on the
 * leased worker's own channel, so a call costs one message each way. The
 * host picks the worker, so it always knows where a call is, whether it
 * started, and which calls share a worker (see pool-call.ts and
 * worker-channel.ts). Nothing in workerData is shared.
 */
export class WorkerPool implements ChannelOwner, CallControls {
  readonly hostFunctions: HostFunctionTable;
  readonly loadTimeoutMs: number;
  readonly #piscina: Piscina;
  readonly #channels = new Map<Worker, WorkerChannel>();
  /** Calls waiting for a worker. */
  readonly #waiting = new CallQueue();
  /** Leases asked of piscina that no worker has taken yet, by lease id: when they were asked for, and how to withdraw them. */
  readonly #pendingLeases = new Map<number, PendingLease>();
  /** Times in a row the pool's queued leases were asked for again because every thread had died (see #unstrand). */
  #strandedRestarts = 0;
  /** Workers holding a lease, by lease id. */
  readonly #leased = new Map<number, WorkerChannel>();
  /**
   * Leases the host gave back whose serve task has not ended yet, with when:
   * each still holds its thread token, and a worker that does not end it in
   * time is blocked and is retired (see WorkerWatch).
   */
  readonly #releasing = new Map<number, { channel: WorkerChannel; since: number }>();
  readonly #watch: WorkerWatch;
  #acks: PoolCall[] = [];
  /** The tool modules this pool has run (one per tool), for preloading new workers. */
  readonly #modules = new Map<string, ModuleTask>();
  /** describe and prepare tasks in flight: they occupy a worker without a call the host can see. */
  untracked = 0;
  #closing = false;
  readonly #budget: ThreadBudget;
  /** Aborted by close(): ends the tasks waiting for a thread token. */
  readonly #closed = new AbortController();
  /** Leaves the budget's queue, while this pool waits there for a token to start a worker on a call. */
  #leaveBudgetQueue: (() => void) | undefined;
  /** A token the budget handed this pool while it waited, not used yet. */
  #spareToken = false;
  #stopWatchingBirths: (() => void) | undefined;

  private constructor(
    entry: RuntimeFile,
    private readonly options: WorkerPoolOptions,
  ) {
    this.hostFunctions = new HostFunctionTable(options.hostFunctions);
    this.loadTimeoutMs = options.loadTimeoutMs;
    this.#budget = options.budget ?? new ThreadBudget(options.maxWorkers);
    guardNodeWorkerMessages();
    this.#piscina = new Piscina({
      // A runtime compiled into the cache is handed over in memory (workers/verified-entry.mjs); a built package's loads by path.
      filename: entry.code !== undefined ? verifiedEntryFile() : entry.file,
      ...(entry.code !== undefined ? { workerData: { toolpoolRuntime: { file: entry.file, code: entry.code } } } : {}),
      minThreads: Math.min(options.minWorkers, options.maxWorkers),
      maxThreads: options.maxWorkers,
      idleTimeout: options.idleTimeoutMs,
      resourceLimits: {
        maxOldGenerationSizeMb: options.maxMemoryMb,
        ...(options.codeRangeSizeMb ? { codeRangeSizeMb: options.codeRangeSizeMb } : {}),
        ...(options.youngGenerationSizeMb ? { maxYoungGenerationSizeMb: options.youngGenerationSizeMb } : {}),
      },
      env: options.env,
      execArgv: options.execArgv,
      // Atomics.waitAsync keeps an idle worker's event loop turning, so a
      // tool's leftover timers fire (and are attributed) while it waits, and
      // a new worker can import its tools before its first call.
      atomics: 'async',
    });
    // Without a listener an 'error' event would kill the host; errors here are
    // already turned into call results, so a stray one is only reported.
    this.#piscina.on('error', (error: unknown) =>
      process.emitWarning(`toolpool: worker pool error: ${errorMessage(error)}`),
    );
    // 'worker' is emitted on the next tick after a Worker is created, before it can post anything, so
    // listening only now still sees the workers piscina just started. Not before: when piscina's
    // constructor throws (Node 24+ refuses permission flags in execArgv), no listener must be left behind.
    this.#stopWatchingBirths = watchWorkerBirths((worker) => this.#adopt(worker));
    guardPiscinaReplies(this.#piscina);
    this.#watch = new WorkerWatch(this);
  }

  static async start(options: WorkerPoolOptions): Promise<WorkerPool> {
    return new WorkerPool(await workerEntryFile(), options);
  }

  async describe(ref: ModuleTask): Promise<DefinitionView> {
    const timeoutMs = this.options.loadTimeoutMs;
    const task: WorkerTask = { op: 'describe', ...ref };
    let reply: DescribeReply;
    try {
      reply = (await this.#runBounded(task, timeoutMs, () =>
        ConfigErrors.loadTimedOut(ref.source, timeoutMs),
      )) as DescribeReply;
    } catch (error) {
      // piscina's own words for a worker that ended while the module loaded name neither the module nor the cause.
      const code = /worker exited with code: (-?\d+)/.exec(errorMessage(error))?.[1];
      if (code !== undefined)
        throw new ToolpoolError(
          'TOOLPOOL_ERR_MODULE_LOAD',
          ConfigErrors.moduleExitedAtImport(ref.source, Number(code)),
        );
      throw error;
    }
    if (!checkReply(reply))
      throw new ToolpoolError('TOOLPOOL_ERR_PROTOCOL', ToolErrors.protocolViolation('a malformed describe reply'));
    if (!reply.ok) throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.error);
    this.#remember(ref);
    return reply.view;
  }

  async prepare(
    ref: ModuleTask,
    raw: Record<string, unknown>,
    toolTimeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const task: WorkerTask = { op: 'prepare', ...ref, raw };
    // A worker that has not imported the module yet does it first.
    const timeoutMs = toolTimeoutMs + this.options.loadTimeoutMs;
    const message = () => (signal?.aborted ? ToolErrors.abortedBeforeStart() : ToolErrors.prepareTimedOut(timeoutMs));
    const reply = (await this.#runBounded(task, timeoutMs, message, signal)) as PrepareReply;
    if (!checkReply(reply))
      throw new ToolpoolError('TOOLPOOL_ERR_PROTOCOL', ToolErrors.protocolViolation('a malformed prepare reply'));
    if (!reply.ok) throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.error);
    return reply.args;
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, toolTimeoutMs: number): Promise<unknown> {
    const task: WorkerTask = { op: 'needsApproval', ...ref, args };
    // The same deadline as prepareArguments: it runs module code too.
    const timeoutMs = toolTimeoutMs + this.options.loadTimeoutMs;
    const reply = (await this.#runBounded(task, timeoutMs, () =>
      ToolErrors.prepareTimedOut(timeoutMs),
    )) as ApprovalReply;
    if (!checkReply(reply))
      throw new ToolpoolError('TOOLPOOL_ERR_PROTOCOL', ToolErrors.protocolViolation('a malformed needsApproval reply'));
    if (!reply.ok) throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.error);
    return reply.answer;
  }

  execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted)
      return Promise.resolve({ ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' });
    if (this.#closing) return Promise.resolve({ ok: false, error: ToolErrors.poolClosed(), code: 'CLOSED' });
    this.#remember(ref);
    const call = new PoolCall(randomRunId(), job, ref, this);
    this.#waiting.push(call);
    this.#dispatch();
    return call.done;
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#closed.abort();
    this.#leaveBudgetQueue?.();
    this.#leaveBudgetQueue = undefined;
    this.#giveBackSpareToken();
    // The budget outlives this pool (a trust domain stopped when idle): what its workers hold goes back.
    for (const channel of this.#channels.values()) {
      if (channel.holdsToken) this.#budget.give();
      channel.holdsToken = false;
    }
    this.#stopWatchingBirths?.();
    this.#watch.stop();
    for (const call of this.#waiting) call.fail(ToolErrors.poolClosed(), 'CLOSED');
    for (const channel of this.#channels.values())
      for (const call of channel.calls.values()) call.fail(ToolErrors.poolClosed(), 'CLOSED');
    const threads = this.#piscina.threads;
    for (const [leaseId, channel] of this.#leased) channel.post({ t: 'release', leaseId });
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

  // Dispatch: each waiting call to the leased worker with the fewest calls that may take it.

  #dispatch(): void {
    if (this.#closing) return;
    this.#giveBackIdleTokens();
    // Sending ahead only once the pool has all its workers: until then a new worker may take the call sooner.
    // Nor while a describe or prepare waits in piscina (the workers must drain so that one gives its lease back for it), nor
    // while another pool waits for a thread token (a worker that finishes must give its token back, not go on with the next call).
    const ahead =
      this.#leased.size >= this.options.maxWorkers && !this.#tasksWaiting && !this.#budget.contended ? SEND_AHEAD : 0;
    while (!this.#waiting.isEmpty) {
      const channel = this.#leastLoaded(ahead);
      const call = channel && this.#nextFor(channel, ahead);
      if (!call) break;
      // A worker that runs nothing yet starts running tool code: it needs one of the tokens every pool shares.
      if (!channel.holdsToken && !this.#takeToken()) {
        this.#waiting.pushFront(call);
        this.#queueForToken();
        break;
      }
      channel.holdsToken = true;
      channel.send(call, this.hostFunctions.names);
    }
    if (!this.#waiting.isEmpty) this.#leaseMore();
    this.#giveBackSpareToken();
    this.#watch.wake();
  }

  /** A token handed to this pool while it waited, used by the next dispatch, or one of the budget's. */
  #takeToken(): boolean {
    if (this.#spareToken) {
      this.#spareToken = false;
      return true;
    }
    return this.#budget.take();
  }

  #giveBackSpareToken(): void {
    if (!this.#spareToken) return;
    this.#spareToken = false;
    this.#budget.give();
  }

  /** Workers that run no call hold no token: it goes back to the budget (another pool may be waiting for it). */
  #giveBackIdleTokens(): void {
    for (const channel of this.#channels.values()) this.#giveBackToken(channel);
  }

  #giveBackToken(channel: WorkerChannel): void {
    if (!channel.holdsToken || channel.calls.size > 0) return;
    channel.holdsToken = false;
    this.#budget.give();
  }

  /**
   * The leased worker with the fewest calls that can take one of the waiting
   * calls: an idle worker before one that would run it beside others, and
   * both before one that would hold it until its running call ends.
   */
  #leastLoaded(ahead: number): WorkerChannel | undefined {
    let best: WorkerChannel | undefined;
    for (const channel of this.#leased.values()) {
      if (channel.retired || (best && channel.calls.size >= best.calls.size)) continue;
      const { toolKey, free } = channel.room(ahead);
      if (free > 0 && (toolKey === undefined || this.#waiting.has(toolKey))) best = channel;
    }
    return best;
  }

  /** The call this worker may take now: any tool's oldest when it is idle, else only more of the tool it runs. */
  #nextFor(channel: WorkerChannel, ahead: number): PoolCall | undefined {
    const { toolKey, free } = channel.room(ahead);
    if (free <= 0) return undefined;
    return toolKey === undefined ? this.#waiting.takeOldest() : this.#waiting.takeOf(toolKey);
  }

  /**
   * Asks piscina for as many more workers as the waiting calls would fill,
   * up to the pool's size. A lease costs no token: an idle leased worker
   * runs no tool code (the token is taken when a call is sent to it).
   */
  #leaseMore(): void {
    const room = this.options.maxWorkers - this.#leased.size - this.#pendingLeases.size;
    const wanted = this.#waiting.workersWanted() - this.#pendingLeases.size;
    for (let i = 0; i < Math.min(room, wanted); i++) this.#requestLease();
  }

  /** Waits in the budget's line for a token; it arrives as this pool's spare and the next dispatch uses it. */
  #queueForToken(): void {
    if (this.#leaveBudgetQueue) return;
    this.#leaveBudgetQueue = this.#budget.wait(() => {
      this.#leaveBudgetQueue = undefined;
      if (this.#closing) return this.#budget.give();
      this.#spareToken = true;
      this.#dispatch();
    });
  }

  #requestLease(): void {
    let leaseId = randomRunId();
    while (this.#pendingLeases.has(leaseId) || this.#leased.has(leaseId)) leaseId = randomRunId();
    const withdraw = new AbortController();
    this.#pendingLeases.set(leaseId, { since: Date.now(), withdraw });
    const ended = () => this.#leaseEnded(leaseId);
    this.#piscina.run({ op: 'serve', leaseId } satisfies WorkerTask, { signal: withdraw.signal }).then(ended, ended);
  }

  /** piscina's serve task returned (released, or its worker went away or was retiring): the lease is over. */
  #leaseEnded(leaseId: number): void {
    this.#releasing.delete(leaseId);
    this.#pendingLeases.delete(leaseId);
    const channel = this.#leased.get(leaseId);
    if (channel) {
      this.#leased.delete(leaseId);
      if (channel.lease === leaseId) channel.lease = undefined;
    }
    this.#dispatch();
  }

  #release(channel: WorkerChannel): void {
    const leaseId = channel.lease;
    if (leaseId === undefined) return;
    channel.lease = undefined;
    this.#leased.delete(leaseId);
    this.#releasing.set(leaseId, { channel, since: Date.now() });
    channel.post({ t: 'release', leaseId });
    this.#watch.wake();
  }

  /** Gives back the leases of workers with no call (all of them when piscina has tasks waiting; else those idle past the linger). */
  releaseIdle(now: number): void {
    const urgent = this.#tasksWaiting;
    for (const channel of [...this.#leased.values()]) {
      if (channel.calls.size === 0 && (urgent || now - channel.idleSince >= LEASE_LINGER_MS)) this.#release(channel);
    }
  }

  /** Tasks other than this pool's own leases wait in piscina for a worker (a describe, a prepare, a needsApproval). */
  get #tasksWaiting(): boolean {
    return this.#piscina.queueSize > this.#pendingLeases.size;
  }

  #remember(ref: ModuleTask): void {
    const key = toolKeyOf(ref);
    if (!this.#modules.has(key)) this.#modules.set(key, ref);
  }

  // ChannelOwner

  leased(channel: WorkerChannel, leaseId: number): boolean {
    if (!this.#pendingLeases.delete(leaseId) || channel.lease !== undefined) return false;
    this.#strandedRestarts = 0;
    channel.lease = leaseId;
    channel.idleSince = Date.now();
    this.#leased.set(leaseId, channel);
    if (this.#closing) this.#release(channel);
    else this.#dispatch();
    return true;
  }

  leaseStalled(): void {
    for (const call of this.#waiting) {
      if (++call.attempts >= MAX_ATTEMPTS)
        call.fail(
          ToolErrors.workerCrashed(
            "no worker could start the call (the pool's workers stayed blocked and were retired)",
          ),
        );
    }
  }

  /** Sends a call no worker started to a worker again, or ends it when workers died on it too often. */
  requeue(call: PoolCall, why: string, failed: boolean): void {
    if (!failed) call.attempts--;
    call.unsent();
    if (call.outcome) return;
    if (call.stopping) return call.endUnstarted();
    if (this.#closing) return call.fail(ToolErrors.poolClosed(), 'CLOSED');
    if (call.attempts >= MAX_ATTEMPTS)
      return call.fail(ToolErrors.workerCrashed(`no worker could start the call (${why})`));
    this.#waiting.pushFront(call);
    this.#dispatch();
  }

  freed(channel: WorkerChannel): void {
    this.#giveBackToken(channel);
    // A describe or prepare waits in piscina: it gets this worker before more calls do, or calls streaming in would starve it.
    if (channel.calls.size === 0 && this.#tasksWaiting) {
      this.#release(channel);
      return this.#dispatch();
    }
    if (!this.#waiting.isEmpty) return this.#dispatch();
    if (channel.calls.size > 0) return;
    // Idle while another worker holds calls it has not started: take one back for this one.
    for (const other of this.#leased.values()) if (other !== channel && other.recallOne()) return;
  }

  stuckThreadEnded(): void {
    this.#budget.give();
    this.#dispatch();
  }

  forget(channel: WorkerChannel): void {
    // Retired or gone: its calls were taken off it, and so is its token.
    if (channel.holdsToken) {
      channel.holdsToken = false;
      this.#budget.give();
    }
    if (this.#channels.get(channel.worker) === channel) this.#channels.delete(channel.worker);
    if (channel.lease !== undefined) this.#leased.delete(channel.lease);
    channel.lease = undefined;
  }

  // CallControls

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

  get hasWaiting(): boolean {
    return !this.#waiting.isEmpty;
  }

  /** When the oldest lease still waiting for a worker was asked for (0 when none waits). */
  get oldestPendingLease(): number {
    let oldest = 0;
    for (const { since } of this.#pendingLeases.values()) if (oldest === 0 || since < oldest) oldest = since;
    return oldest;
  }

  get leaseCount(): number {
    return this.#leased.size;
  }

  /** Workers that have not ended a lease given back `boundMs` ago: they are blocked, and hold a thread token meanwhile. */
  *releasesOverdue(now: number, boundMs: number): Iterable<WorkerChannel> {
    for (const { channel, since } of this.#releasing.values()) if (now - since > boundMs) yield channel;
  }

  get releasing(): number {
    return this.#releasing.size;
  }

  /** Every Worker of this process is seen here; this pool's own are bound by their first message. */
  #adopt(worker: Worker): void {
    if (!this.#piscina.threads.includes(worker)) return;
    redirectToolOutput(worker, this.options.toolOutputPrefix);
    let bound = false;
    let refused = false;
    const onMessage = (message: unknown) => {
      if (!bound && isHello(message)) {
        bound = true;
        return this.#bind(
          worker,
          message[WORKER_HELLO] === true ? (message.port as MessagePort) : undefined,
          StartCounter.from(message.starts),
        );
      }
      if (isPiscinaReady(message)) return;
      // A second hello, or anything else a tool posts on the parent port: never trusted.
      const channel = this.#channels.get(worker);
      if (channel) channel.retire('it posted on its parent port', true);
      // Once: each terminate() waits on 'exit' with a listener of its own, and a flood of messages would add thousands.
      else if (!refused) {
        refused = true;
        void worker.terminate();
      }
    };
    worker.on('message', onMessage);
    // After piscina's own 'exit' listener (added when it made the worker) has let the worker go.
    worker.once('exit', () => this.#unstrand());
  }

  /**
   * piscina starts a thread for a queued task only when a task is submitted
   * (or to keep `minThreads`): when the last of its threads dies while
   * leases of this pool wait in its queue, they would wait there for ever,
   * and so would the calls waiting for a worker. With no thread left none
   * of them can be running, so they are withdrawn (an aborted queued task
   * just leaves the queue) and asked for again, which starts a thread. New
   * threads that die before they take a lease, MAX_ATTEMPTS times in a
   * row, fail the calls that wait. A task that reads a module (describe,
   * prepare, needsApproval) stranded with no call waiting gets a lease
   * asked behind it: its thread takes the task first. (Past the bound, such
   * tasks end by their own deadlines.)
   */
  #unstrand(): void {
    if (this.#closing || this.#piscina.threads.length > 0) return;
    if (this.#pendingLeases.size === 0) {
      if (this.#piscina.queueSize > 0) this.#requestLease();
      return;
    }
    const givingUp = ++this.#strandedRestarts > MAX_ATTEMPTS;
    if (givingUp) {
      this.#strandedRestarts = 0;
      for (const call of this.#waiting)
        call.fail(ToolErrors.workerCrashed('no worker could start the call (each new worker of its pool died first)'));
    }
    // Waiting calls ask again when their withdrawn leases end (#leaseEnded); queued tasks are asked for here.
    for (const { withdraw } of this.#pendingLeases.values()) withdraw.abort();
    if (!givingUp && this.#waiting.isEmpty && this.#piscina.queueSize > 0) this.#requestLease();
  }

  #bind(worker: Worker, port: MessagePort | undefined, starts: StartCounter | undefined): void {
    if (!port || !starts) return void worker.terminate();
    const channel = new WorkerChannel(worker, port, starts, this);
    this.#channels.set(worker, channel);
    onWorkerViolation(worker, (reason) => channel.retire(reason, true));
    // A replacement worker (after a crash or a kill) imports the tools now,
    // not when a call arrives: importing a module can take a hundred milliseconds and more.
    if (this.#modules.size > 0) channel.post({ t: 'preload', preload: [...this.#modules.values()] });
  }

  /** Loading a module and `prepareArguments` run module code too, so they get a deadline; past it, piscina terminates the worker. */
  /**
   * Runs a task that reads a module (describe, prepare, needsApproval) on a
   * thread token. The deadline starts once the token is held: waiting for
   * the other domains' threads is not the module's time. `signal` (the
   * caller's) and closing the pool end the wait and the task.
   */
  async #runBounded(
    task: WorkerTask,
    timeoutMs: number,
    message: () => string,
    signal?: AbortSignal,
  ): Promise<unknown> {
    this.untracked++;
    let token = false;
    try {
      await this.#budget.acquire(signal ? AbortSignal.any([signal, this.#closed.signal]) : this.#closed.signal);
      token = true;
      const timeout = AbortSignal.timeout(timeoutMs);
      const reply = this.#piscina.run(task, { signal: signal ? AbortSignal.any([timeout, signal]) : timeout });
      // Every worker may be leased and idle: give one back rather than make this task wait for the linger.
      if (this.#tasksWaiting) this.releaseIdle(Date.now());
      return await reply;
    } catch (error) {
      if (this.#closed.signal.aborted) throw new ToolpoolError('TOOLPOOL_ERR_CLOSED', ToolErrors.poolClosed());
      // The caller's signal may carry any reason; piscina rejects with an AbortError, the deadline with a TimeoutError.
      const name = (error as Error | undefined)?.name;
      if (signal?.aborted || name === 'AbortError' || name === 'TimeoutError')
        throw new ToolpoolError('TOOLPOOL_ERR_ABORTED', message());
      throw error;
    } finally {
      if (token) this.#budget.give();
      this.untracked--;
    }
  }
}

/**
 * Node pipes a worker's stdout into this process's stdout: a tool's
 * console.log would land there, in a protocol the host may speak on it.
 * Both streams go to stderr instead, each line marked.
 */
function redirectToolOutput(worker: Worker, prefix = TOOL_OUTPUT_PREFIX): void {
  worker.stdout.unpipe(process.stdout);
  worker.stderr.unpipe(process.stderr);
  forwardToolOutput(worker.stdout, prefix);
  forwardToolOutput(worker.stderr, prefix);
}

function isHello(message: unknown): message is { [WORKER_HELLO]: unknown; port: unknown; starts?: unknown } {
  return (
    typeof message === 'object' &&
    message !== null &&
    WORKER_HELLO in message &&
    (message as { port?: unknown }).port instanceof MessagePort
  );
}

function isPiscinaReady(message: unknown): boolean {
  return (
    typeof message === 'object' && message !== null && PISCINA_READY in message && Object.keys(message).length === 1
  );
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
async function workerEntryFile(): Promise<RuntimeFile> {
  const extension = extname(fileURLToPath(import.meta.url));
  return runtimeFile(fileURLToPath(new URL(`./runtime/tool-worker${extension}`, import.meta.url)));
}

/** The plain JavaScript entry that loads a compiled runtime by content (only when toolpool runs from its sources). */
function verifiedEntryFile(): string {
  return fileURLToPath(new URL('./runtime/verified-entry.mjs', import.meta.url));
}

/** The package folder holding the worker entry (`src/isolation/worker/runtime/`) and the library code it imports. */
function workerEntryDirectory(): string {
  return fileURLToPath(new URL('../../../', import.meta.url));
}

/**
 * What a permission-restricted worker must read to load the worker entry:
 * the built package folder, or, when running from TypeScript sources (the
 * entry is then compiled into the compile cache), the entry that checks it.
 */
export function workerEntryReadPaths(): string[] {
  return extname(fileURLToPath(import.meta.url)) === '.ts' ? [verifiedEntryFile()] : [workerEntryDirectory()];
}
