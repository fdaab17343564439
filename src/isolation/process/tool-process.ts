import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolErrors, errorMessage } from '../../core/errors.ts';
import { runtimeFile, toRunnableRuntime, type RuntimeFile } from '../worker/module-compiler.ts';
import { noOneToAsk } from '../../core/elicitation.ts';
import { relayAnswer } from '../worker/questions.ts';
import { HostCallGate, HostFunctionTable, type HostCallReply } from '../worker/host-functions.ts';
import { checkPayload, withinExpandedBytes } from '../worker/payload.ts';
import { VERDICT_AFTER_MS, toolKeyOf } from '../worker/pool-call.ts';
import { forwardToolOutput } from '../worker/tool-output.ts';
import type { ThreadBudget } from '../worker/thread-budget.ts';
import { HOST_READS_CPU, heapBoundBytes } from '../worker/usage-reading.ts';
import { withQueuedBefore, type RunJob, type RunOutcome, type RunUsage } from '../../core/runner.ts';
import type { ModuleTask, PrepareLimits } from '../../core/tier.ts';
import type { DefinitionView } from '../../core/tool-view.ts';
import type { HostFunctions } from '../../core/tool.ts';
import {
  FROM_HOST_FD,
  TO_HOST_FD,
  processLauncher,
  spawnLaunch,
  type ChildLaunch,
  type ChildLauncher,
  type ChildSpec,
} from './child-launcher.ts';
import { checkChildMessage, checkReceivedOutcome, failedRun } from './child-messages.ts';
import { ChildSlots } from './child-slots.ts';
import { exitStatus, killGroup, type ExitStatus } from './exit-status.ts';
import { encodeFrame, FrameReader } from './frame-channel.ts';
import { saysOutOfMemory, StderrTail } from './stderr-tail.ts';
import { inheritableFds } from './inherited-fds.ts';
import {
  CHILD_CODE_RANGE_MB,
  CHILD_YOUNG_GENERATION_MB,
  childDataCapBytes,
  nodeReservation,
} from './node-reservation.ts';
import type { ChildInit, ChildToHost, HostToChild } from './process-protocol.ts';
import { ToolpoolError, type ToolErrorCode } from '../../core/error-codes.ts';

export interface ProcessTierOptions
  extends Omit<
    ChildInit,
    'hostFunctionNames' | 'closeFds' | 'codeRangeSizeMb' | 'youngGenerationSizeMb' | 'maxOpenFiles'
  > {
  hostFunctions: HostFunctions;
  /** How the child is started (default: `processLauncher`, prlimit + node in a PID namespace; the sandbox tier wraps it in bwrap). */
  launcher?: ChildLauncher;
  /** Flags of the child's own Node process, before its entry file: its permission flags. */
  childFlags?: string[];
  /** Load child-worker-guard first in the child (with permissions: no unrestricted worker even from its main thread). */
  guardWorkers?: boolean;
  /** What the child must read and write besides Node itself; see `ChildSpec`. */
  readPaths?: string[];
  writePaths?: string[];
  net?: boolean | readonly string[];
  /** The child's working folder (default: the host's). */
  cwd?: string;
  /** The cap on threads this tier shares with the other trust domains (see ThreadBudget). */
  budget?: ThreadBudget;
}

const CLOSE_GRACE_MS = 2_000;
/** How many children a request may wait for, each replaced before it got the request, before it fails. */
const MAX_START_ATTEMPTS = 3;
/**
 * A file error naming a relative path, as Node words it (`ENOENT: no such file or directory, open 'data/x.txt'`)
 * or as toolpool words a permission denial (`Access denied: the tool may not read "data/x.txt"`).
 */
const RELATIVE_PATH_ERROR =
  /\b(?:ENOENT|EACCES)\b[^\n]*?, \w+ '((?![/\\])[^'\n]+)'|^Access denied: the tool may not (?:read|write) "((?![/\\])[^"\n]+)"/;
/** How long a child may take to start and answer its init. */
const START_DEADLINE_MS = 20_000;
/** Added to every request's own bound before the host gives up on the child. */
const DEADLINE_MARGIN_MS = 5_000;
/**
 * After a call's grace period the child terminates its thread and waits up to VERDICT_AFTER_MS to see how it ends
 * (out of memory, killed, or still inside a native call, which it reports). It says when it terminated one, and only
 * then does the host's deadline make room for that verdict: a child a tool took over that never says so is given
 * up DEADLINE_MARGIN_MS after the call's own bound, not VERDICT_AFTER_MS later.
 */
const VERDICT_MARGIN_MS = VERDICT_AFTER_MS + DEADLINE_MARGIN_MS;
/** The child's cap on open descriptors: plenty for a tool, few enough that a leak is found long before the host's own limit. */
export const CHILD_MAX_OPEN_FILES = 4_096;
/** The largest frame a child may send when no call allows more: tool definitions (a 256 KiB schema, a 64 KiB text) fit. */
const BASE_FRAME_BYTES = 1 << 20;
/** Room for the message around a payload of maxResultBytes. */
const FRAME_MARGIN_BYTES = 64 * 1024;

/** A request in flight: the replies it accepts, and the host-side deadline after which the child is killed. */
/** What the host keeps of its replies while a child does not read them (see #replyTo). */
const MAX_UNREAD_REPLY_BYTES = 16 * 1024 * 1024;

type Pending = {
  accepts: ReadonlySet<ChildToHost['type']>;
  resolve: (message: ChildToHost) => void;
  onUpdate?: RunJob['onUpdate'];
  /** An execute request's questions (ctx.elicit): who answers, and what ends them (the call's end or abort). */
  elicit?: RunJob['elicit'];
  /** Made when a question comes or the call is aborted (see endQuestions); aborted at the call's end if made. */
  ended?: AbortController;
  maxUpdateBytes?: number;
  /** Names the request in a missed deadline's error. */
  what: string;
  /** When it was made, then when it was sent (Date.now() time): a missed deadline's error counts from here. */
  since: number;
  /** How long the child has to answer once it has the request (an abort before it was sent shortens it). */
  boundMs: number;
  /** Written to a child: it is that child's, and ends with it. One not yet sent waits for the next child instead. */
  sent?: boolean;
  deadline?: NodeJS.Timeout;
  /** When `deadline` fires (Date.now() time): a shortened deadline never moves past it. */
  deadlineAt: number;
  /** The child said it terminated the call's thread: by then the verdict is due (see #awaitVerdict). */
  verdictAt?: number;
};

type Expect = {
  accepts: ChildToHost['type'][];
  what: string;
  deadlineMs: number;
  onUpdate?: RunJob['onUpdate'];
  maxUpdateBytes?: number;
  elicit?: RunJob['elicit'];
  /** Told when the request went to the child (after the child started). */
  onSent?: () => void;
};

/** A started child: the process and the host's ends of its framed channel (see FROM_HOST_FD). */
interface Child {
  process: ChildProcess;
  toChild: Socket;
  fromChild: Socket;
  /** The launch reports a signal death as exit code 128 + N. */
  signalsAsExitCodes: boolean;
  /** The child said it holds too many open descriptors: it is replaced once its requests are answered. */
  exhausted?: number;
  /** The end of what it printed: why V8 aborted it, if it did. */
  stderr: StderrTail;
  /** Its exit, however early it comes (even before the host sent its init). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * One child process of the process tier (respawned after it dies) and the
 * requests in flight in it. Everything the child sends is untrusted: frames
 * are bounded before they are buffered, every message is checked and must
 * answer an open request of the right kind, and anything else kills the
 * child (its calls get an error saying so; the next request starts a new one).
 */
export class ToolProcess {
  #starting: Promise<Child> | undefined;
  #child: Child | undefined;
  readonly #pending = new Map<number, Pending>();
  /** Dead children's requests, answered once their stderr ended (see #onExit): close() waits for them. */
  readonly #verdicts = new Set<Promise<void>>();
  readonly #hostFunctions: HostFunctionTable;
  readonly #hostCalls = new WeakMap<Child, HostCallGate>();
  readonly #slots: ChildSlots;
  #nextId = 1;
  #closing = false;

  constructor(
    private readonly options: ProcessTierOptions,
    private readonly maxMemoryMb: number,
  ) {
    this.#hostFunctions = new HostFunctionTable(options.hostFunctions);
    this.#slots = new ChildSlots(options.budget);
  }

  async describe(ref: ModuleTask): Promise<DefinitionView> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request(
      { type: 'describe', id, ref },
      { accepts: ['described'], what: 'describe', deadlineMs },
    );
    if (reply.type === 'described') return reply.view;
    throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async prepare(
    ref: ModuleTask,
    raw: Record<string, unknown>,
    limits: PrepareLimits,
  ): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request(
      { type: 'prepare', id, ref, raw, limits },
      { accepts: ['prepared'], what: 'prepare', deadlineMs },
    );
    if (reply.type === 'prepared') return reply.args;
    throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request(
      { type: 'needsApproval', id, ref, args, limits },
      { accepts: ['approvalAnswered'], what: 'needsApproval', deadlineMs },
    );
    if (reply.type === 'approvalAnswered') return reply.answer;
    throw new ToolpoolError('TOOLPOOL_ERR_TOOL_FAILED', reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' };
    const handedAt = performance.now();
    let leave: () => void;
    try {
      // A worker of the child is a thread like any other: the call waits for the executor's thread budget.
      leave = await this.#slots.enter(toolKeyOf(ref), ref.concurrency ?? 1, job.signal);
    } catch {
      return { ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' };
    }
    try {
      return await this.#execute(job, ref, handedAt);
    } finally {
      leave();
    }
  }

  async #execute(job: RunJob, ref: ModuleTask, handedAt: number): Promise<RunOutcome> {
    let sentAt = handedAt;
    const id = this.#nextId++;
    // The child runs the two-step stop itself; the host passes the abort on and bounds how long the child may take.
    const onAbort = () => {
      const pending = this.#pending.get(id);
      // Still waiting for a child: it never ran, and now never will (sent after its abort, it would run unstopped).
      if (pending && !pending.sent)
        return this.#settle(id, { type: 'failed', id, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' });
      endQuestions(pending);
      this.#send({ type: 'abort', id });
      this.#shortenDeadline(id, job.limits.abortGraceMs + DEADLINE_MARGIN_MS);
    };
    // Aborted while it waited for its share of the thread budget: the listener below would never hear it.
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart(), code: 'ABORTED' };
    job.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { callId, args, limits } = job;
      const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + limits.abortGraceMs + DEADLINE_MARGIN_MS;
      const onSent = () => (sentAt = performance.now());
      const expect = {
        accepts: ['executed', 'update', 'unstoppable', 'terminated'] as ChildToHost['type'][],
        what: 'execute',
        deadlineMs,
        maxUpdateBytes: limits.maxResultBytes,
        onSent,
        ...(job.onUpdate ? { onUpdate: job.onUpdate } : {}),
        ...(job.elicit ? { elicit: job.elicit } : {}),
      };
      const reply = await this.#request(
        {
          type: 'execute',
          id,
          ref,
          callId,
          ...(job.runId !== undefined ? { runId: job.runId } : {}),
          args,
          limits,
          measureUsage: job.measureUsage !== false,
        },
        expect,
      );
      if (reply.type === 'failed') return { ok: false, error: reply.error, code: reply.code ?? 'CRASHED' };
      if (reply.type !== 'executed')
        return { ok: false, error: ToolErrors.workerCrashed('unexpected reply'), code: 'CRASHED' };
      // The child timed the call from when it got it; waiting here for the child to start was queue time too.
      const outcome = withQueuedBefore(
        boundedUsage(reply.outcome, performance.now() - sentAt, this.maxMemoryMb),
        sentAt - handedAt,
      );
      return this.#withRelativePathHint(
        withProcessMemoryMessage(checkReceivedOutcome(outcome, limits.maxResultBytes), this.maxMemoryMb),
      );
    } finally {
      job.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Under permissions the plain process tier's child works in an empty
   * folder of its own (its workers could read all under a real one, Node
   * 22+), so a relative path a tool's author meant against the host's
   * working folder fails there: the error then says why and what to write.
   * (The sandbox binds the host's working folder, where they resolve.)
   */
  #withRelativePathHint(outcome: RunOutcome): RunOutcome {
    if (outcome.ok || this.options.cwd === undefined || this.options.launcher !== undefined) return outcome;
    const found = RELATIVE_PATH_ERROR.exec(outcome.error);
    const relative = found?.[1] ?? found?.[2];
    return relative === undefined
      ? outcome
      : failedRun(
          outcome,
          outcome.error + ToolErrors.relativePathInEmptyFolder(relative, process.cwd()),
          outcome.code ?? 'THREW',
        );
  }

  async close(): Promise<void> {
    this.#closing = true;
    const child = await this.#starting?.catch(() => undefined);
    if (child && child.process.exitCode === null && child.process.signalCode === null) {
      this.#send({ type: 'close' });
      const timer = setTimeout(() => killGroup(child.process), CLOSE_GRACE_MS);
      await child.exited;
      clearTimeout(timer);
      killGroup(child.process); // whatever the child left running in its session goes too
    }
    // A child that died before: its calls get their true cause (bounded by its stderr's end), not "closed".
    await Promise.all(this.#verdicts);
  }

  async #request(request: HostToChild & { id: number }, expect: Expect): Promise<ChildToHost> {
    const { id } = request;
    if (this.#closing) return { type: 'failed', id, error: ToolErrors.poolClosed() };
    let pending!: Pending;
    const reply = new Promise<ChildToHost>((resolve) => {
      const { onUpdate, maxUpdateBytes, elicit, what } = expect;
      pending = {
        accepts: new Set([...expect.accepts, 'failed']),
        resolve,
        what,
        since: Date.now(),
        boundMs: expect.deadlineMs,
        deadlineAt: Infinity, // armed below
        ...(onUpdate ? { onUpdate } : {}),
        ...(elicit ? { elicit } : {}),
        ...(maxUpdateBytes ? { maxUpdateBytes } : {}),
      };
      this.#pending.set(id, pending);
      // Until it is sent, a net under the child's start (which has its own bound, START_DEADLINE_MS).
      this.#arm(id, pending, pending.since + expect.deadlineMs);
    });
    // Not awaited: the request's answer (its deadline's, close()'s) never waits for a child's start.
    void this.#deliver(request, pending, expect.onSent);
    return reply;
  }

  /**
   * Sends a request to the child once it is up (started if need be); a child that could not start fails it. A
   * child replaced while the request waited for it (it died, or was worn out) never had it, so the request waits for
   * the next one, up to three times. Each check and the write are one step: nothing can answer the request or
   * replace its child in between.
   */
  async #deliver(request: HostToChild & { id: number }, pending: Pending, onSent?: () => void): Promise<void> {
    const { id } = request;
    try {
      for (let attempt = 1; ; attempt++) {
        if (this.#closing) this.#settle(id, { type: 'failed', id, error: ToolErrors.poolClosed(), code: 'CLOSED' });
        if (this.#pending.get(id) !== pending) return; // answered while it waited (its deadline, close(), its abort)
        if (attempt > MAX_START_ATTEMPTS)
          // Caught below, which wraps its text in the could-not-start error: a plain Error is enough here.
          throw new Error(
            `the child it waited for was replaced before it got the request, ${MAX_START_ATTEMPTS} times`,
          );
        const child = await this.#started();
        if (this.#pending.get(id) !== pending) return;
        if (child !== this.#child || this.#closing) continue;
        write(child, request);
        pending.sent = true;
        // The child has its bound from now: the time its start took is not the call's.
        pending.since = Date.now();
        this.#arm(id, pending, pending.since + pending.boundMs);
        this.#refWhileBusy(child);
        onSent?.();
        return;
      }
    } catch (error) {
      if (this.#closing) this.#settle(id, { type: 'failed', id, error: ToolErrors.poolClosed(), code: 'CLOSED' });
      else this.#settle(id, { type: 'failed', id, error: ToolErrors.processCouldNotStart(errorMessage(error)) });
    }
  }

  #settle(id: number, message: ChildToHost): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    this.#answer(pending, message);
  }

  /** Ends a request taken out of #pending: its deadline and questions end, and its caller gets `message`. */
  #answer(pending: Pending, message: ChildToHost): void {
    clearTimeout(pending.deadline);
    pending.ended?.abort();
    const child = this.#child;
    if (child?.exhausted !== undefined && this.#pending.size === 0)
      this.#kill(ToolErrors.processExhausted(child.exhausted));
    else if (child) this.#refWhileBusy(child);
    pending.resolve(message);
  }

  /** (Re)arms a request's deadline for `at`; missing it kills the child, and the error counts from the request. */
  #arm(id: number, pending: Pending, at: number): void {
    clearTimeout(pending.deadline);
    pending.deadlineAt = at;
    pending.deadline = setTimeout(() => this.#missed(id, pending, at - pending.since), Math.max(0, at - Date.now()));
  }

  /**
   * A request's bound passed. Sent, the child did not answer it in time and is killed. Not sent yet, it waited for a
   * child's start, which has a bound of its own and other requests waiting on it: only this request ends.
   */
  #missed(id: number, pending: Pending, ms: number): void {
    if (pending.sent) return this.#kill(ToolErrors.processUnresponsive(pending.what, ms), id);
    const error = ToolErrors.processCouldNotStart(
      `its start took longer than the ${ms} ms the ${pending.what} request may wait`,
    );
    this.#settle(id, { type: 'failed', id, error, code: 'CRASHED' });
  }

  /**
   * The child terminated the call's thread: its verdict may take VERDICT_AFTER_MS. The room is counted from the
   * notice, or from when the call was due to be stopped at the latest if that came first (a notice held back to the
   * last moment gains nothing), and given once: a child that says so again gets no more time.
   */
  #awaitVerdict(id: number, pending: Pending): void {
    if (pending.verdictAt !== undefined) return;
    const dueToStop = pending.deadlineAt - DEADLINE_MARGIN_MS;
    pending.verdictAt = Math.min(Date.now(), dueToStop) + VERDICT_MARGIN_MS;
    if (pending.verdictAt > pending.deadlineAt) this.#arm(id, pending, pending.verdictAt);
  }

  /**
   * An abort bounds the child's answer more tightly: its grace and the margin from now. Never later than the
   * deadline it had, and never before a verdict it awaits is due.
   */
  #shortenDeadline(id: number, ms: number): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    if (!pending.sent) return void (pending.boundMs = Math.min(pending.boundMs, ms));
    const at = Math.max(Date.now() + ms, pending.verdictAt ?? 0);
    if (at < pending.deadlineAt) this.#arm(id, pending, at);
  }

  /**
   * Kills the child for a reason of the host's (a missed deadline, a broken
   * protocol): the call that showed it gets `error`, the others running in
   * the same child an error saying why it was killed; the next call starts
   * a fresh child.
   */
  #kill(
    error: string,
    culprit?: number,
    others = ToolErrors.processKilledForOther(`another request made it stop: ${error}`),
  ): void {
    if (culprit !== undefined) this.#settle(culprit, { type: 'failed', id: culprit, error, code: 'CRASHED' });
    const child = this.#child;
    if (!child) return;
    this.#retire(child, culprit === undefined ? error : others);
    killGroup(child.process);
  }

  /** Forgets the current child at once (the next request starts a new one) and fails what was running in it. */
  #retire(child: Child, error: string, code: ToolErrorCode = 'CRASHED'): void {
    if (this.#child !== child) return; // an older child; its requests were already failed
    this.#fail(this.#detach(child), error, code);
  }

  /**
   * The next request starts a new child. Returns the requests the old child had, taken out of #pending: the new
   * child can neither answer them nor share a fate with them. Requests not yet sent stay, for the next child.
   */
  #detach(child: Child): Map<number, Pending> {
    this.#starting = undefined;
    this.#child = undefined;
    closeChannel(child);
    const requests = new Map<number, Pending>();
    for (const [id, pending] of this.#pending) {
      if (!pending.sent) continue; // never reached it: goes to the next child (see #deliver)
      requests.set(id, pending);
      this.#pending.delete(id);
    }
    return requests;
  }

  #fail(requests: ReadonlyMap<number, Pending>, error: string, code: ToolErrorCode): void {
    for (const [id, pending] of requests) this.#answer(pending, { type: 'failed', id, error, code });
  }

  #send(message: HostToChild): void {
    void this.#starting?.then((child) => write(child, message)).catch(() => undefined);
  }

  #started(): Promise<Child> {
    // A child that holds too many descriptors takes no new request; the calls still in it end with it.
    if (this.#child?.exhausted !== undefined) this.#kill(ToolErrors.processExhausted(this.#child.exhausted));
    if (this.#starting) return this.#starting;
    const starting: Promise<Child> = this.#spawn().catch((error: unknown) => {
      // Only this start is forgotten: a child killed while starting may already have a successor.
      if (this.#starting === starting) this.#starting = undefined;
      throw error;
    });
    this.#starting = starting;
    return starting;
  }

  async #spawn(): Promise<Child> {
    const { launch, init } = await this.#prepareStart();
    if (this.#closing) {
      // close() came while it prepared: no child is spawned for a tier that is going away.
      launch.cleanup?.();
      throw new ToolpoolError('TOOLPOOL_ERR_CLOSED', ToolErrors.poolClosed());
    }
    const process = await spawnLaunch(launch);
    const toChild = process.stdio[FROM_HOST_FD] as Socket;
    const fromChild = process.stdio[TO_HOST_FD] as Socket;
    toChild.on('error', () => undefined); // a child that closed its stdin is gone or going: its exit says why
    const signalsAsExitCodes = launch.signalsAsExitCodes === true;
    const child: Child = {
      process,
      toChild,
      fromChild,
      signalsAsExitCodes,
      stderr: new StderrTail(launch.stderr ?? process.stderr),
      exited: new Promise((resolve) => process.once('exit', (code, signal) => resolve({ code, signal }))),
    };
    this.#child = child;
    // Everything the child prints is a tool's (or about one): to this process's stderr, marked, never to its stdout.
    for (const output of [process.stdout, process.stderr]) if (output) forwardToolOutput(output);
    const firstMessage = this.#listen(child);
    process.on('exit', (code, signal) => this.#onExit(child, code, signal));
    process.once('exit', () => launch.cleanup?.());
    try {
      write(child, { type: 'init', init });
      await this.#ready(child, firstMessage);
    } catch (error) {
      // It never started, so it is no one's child now: were it still #child, its exit (which comes later) would
      // detach whatever start came next, and a third start would orphan that one with the requests sent to it.
      if (this.#child === child) this.#child = undefined;
      killGroup(process);
      throw error;
    }
    return child;
  }

  /**
   * What a start needs before the child is spawned (its launch: files compiled, the sandbox's sockets; its init),
   * bounded like the rest of the start: a step that never ends fails this start, not every call after it. A launch
   * that arrives too late is cleaned up.
   */
  async #prepareStart(): Promise<{ launch: ChildLaunch; init: ChildInit }> {
    const launcher = this.options.launcher ?? processLauncher;
    const launching = this.#spec().then((spec) => launcher.launch(spec));
    const preparing = Promise.all([launching, this.#init()]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`its launch did not finish within ${START_DEADLINE_MS} ms`)),
        START_DEADLINE_MS,
      );
    });
    try {
      const [launch, init] = await Promise.race([preparing, late]);
      return { launch, init };
    } catch (error) {
      // No child will use this launch (its sockets, its seccomp descriptor), whenever it arrives.
      void launching.then((launch) => launch.cleanup?.()).catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads the child's frames, bounded by what the calls in flight may send;
   * resolves with the first message (which must be `ready`), and routes the
   * rest. Junk, an oversized frame or a broken message kills the child.
   */
  #listen(child: Child): Promise<unknown> {
    let first: ((message: unknown) => void) | undefined;
    const firstMessage = new Promise<unknown>((resolve) => (first = resolve));
    const reader = new FrameReader(
      () => this.#frameBound(),
      (message) => {
        if (first) {
          const resolve = first;
          first = undefined;
          return resolve(message);
        }
        this.#onMessage(message, child);
      },
      (problem) => {
        if (first) first({ type: 'broken', problem });
        else if (child === this.#child) this.#kill(ToolErrors.processBrokeProtocol(`it sent ${problem}`));
        closeChannel(child);
      },
    );
    child.fromChild.on('data', (chunk: Buffer) => reader.push(chunk));
    child.fromChild.on('error', () => undefined); // the child's exit says what happened
    return firstMessage;
  }

  async #ready(child: Child, firstMessage: Promise<unknown>): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(child.process);
        reject(new Error(`it did not answer within ${START_DEADLINE_MS} ms`));
      }, START_DEADLINE_MS);
      void firstMessage.then((message) => {
        clearTimeout(timer);
        const checked = checkChildMessage(message);
        if (typeof checked !== 'string' && checked.type === 'ready') return resolve();
        killGroup(child.process);
        reject(new Error('its first message was not "ready"'));
      });
      void child.exited.then(async ({ code, signal }) => {
        clearTimeout(timer);
        const why = await child.stderr.outOfMemory();
        reject(new Error(`it exited (${exitName(child, code, signal)}) during start${why ? `: ${why}` : ''}`));
      });
    });
  }

  async #spec(): Promise<ChildSpec> {
    const entry = await childEntryFile();
    const { env, childFlags = [], readPaths = [], writePaths = [], net, maxWorkers, guardWorkers, cwd } = this.options;
    const guard = guardWorkers ? [`--import=${await childModule('child-worker-guard')}`] : [];
    return {
      node: process.execPath,
      nodeArgs: [...childFlags, ...guard, entry],
      env,
      memoryCapBytes: childDataCapBytes(await nodeReservation(), maxWorkers, this.maxMemoryMb),
      maxMemoryMb: this.maxMemoryMb,
      maxOpenFiles: CHILD_MAX_OPEN_FILES,
      readPaths: [entry, ...readPaths],
      writePaths,
      ...(net !== undefined ? { net } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
    };
  }

  /** What the child is told at start: only the fields of `ChildInit`, never the host functions themselves. */
  async #init(): Promise<ChildInit> {
    const { minWorkers, maxWorkers, idleTimeoutMs, env, execArgv, defaultMemoryMb, loadTimeoutMs } = this.options;
    return {
      minWorkers,
      maxWorkers,
      idleTimeoutMs,
      env,
      execArgv,
      defaultMemoryMb,
      loadTimeoutMs,
      hostFunctionNames: this.#hostFunctions.names,
      codeRangeSizeMb: CHILD_CODE_RANGE_MB,
      youngGenerationSizeMb: CHILD_YOUNG_GENERATION_MB,
      closeFds: inheritableFds(),
      precompiled: await precompiledForChild(),
      maxOpenFiles: CHILD_MAX_OPEN_FILES,
    };
  }

  /** The most a frame may hold now, in its bytes and in what its shared references expand to. */
  #frameBound(): number {
    return Math.max(BASE_FRAME_BYTES, this.#largestRunningResultBytes()) + FRAME_MARGIN_BYTES;
  }

  /**
   * Everything from the child is checked, and must answer a request of this
   * host that is still open. First of all its size as read, with each shared
   * reference counted each time (bounded by the frame bound, so the check
   * costs no more than a frame may): every later check and every reader of
   * the message then costs what its bytes allow. An honest child never sends
   * more (its workers count results that way before they send them).
   */
  #onMessage(raw: unknown, child: Child): void {
    if (child !== this.#child) return;
    const bound = this.#frameBound();
    if (!withinExpandedBytes(raw, bound))
      return this.#kill(
        ToolErrors.processBrokeProtocol(
          `it sent a message whose shared references expand past the ${bound} bytes a message may have here`,
        ),
      );
    const message = checkChildMessage(raw);
    if (typeof message === 'string') return this.#kill(ToolErrors.processBrokeProtocol(`it sent ${message}`));
    if (message.type === 'ready') return;
    if (message.type === 'host-call') return this.#answerHostCall(message, child);
    if (message.type === 'elicit') return this.#answerQuestion(message, child);
    if (message.type === 'exhausted') return void (child.exhausted = message.openFiles);
    const pending = this.#pending.get(message.id);
    if (!pending?.accepts.has(message.type)) {
      return this.#kill(
        ToolErrors.processBrokeProtocol(
          `it sent "${message.type}" for request ${message.id}, which ${pending ? 'expects another reply' : 'is not open'}`,
        ),
      );
    }
    if (message.type === 'update') return this.#relayUpdate(message, pending);
    if (message.type === 'terminated') return this.#awaitVerdict(message.id, pending);
    // A stopped call is stopped: its thread would not end, so the child goes, with every thread in it. The call is told it was
    // killed (it is, now); the others running in the child, why they were stopped.
    if (message.type === 'unstoppable')
      return this.#kill(message.error, message.id, ToolErrors.processKilledForUnstoppable());
    this.#settle(message.id, message);
  }

  /** An update is measured again on the host, like a result: one too big (or malformed) ends its call, not the child. */
  #relayUpdate(message: Extract<ChildToHost, { type: 'update' }>, pending: Pending): void {
    const problem = checkPayload(message.partial, 'update', pending.maxUpdateBytes ?? 0);
    if (!problem) return void pending.onUpdate?.(message.partial);
    this.#send({ type: 'abort', id: message.id });
    this.#settle(message.id, { type: 'failed', id: message.id, error: problem });
  }

  /**
   * Host calls from the child go through the same table and gate as a
   * worker's: only listed functions, arguments no larger than the largest
   * maxResultBytes of the calls running there, at most 64 at once.
   */
  #answerHostCall(message: Extract<ChildToHost, { type: 'host-call' }>, child: Child): void {
    let gate = this.#hostCalls.get(child);
    if (!gate) {
      const reply = (answer: HostCallReply) => this.#replyTo(child, { type: 'host-reply', ...answer });
      this.#hostCalls.set(child, (gate = new HostCallGate(this.#hostFunctions, reply)));
    }
    gate.submit(message, this.#largestRunningResultBytes(), () => child === this.#child && this.#pending.size > 0);
  }

  /**
   * A tool's question (ctx.elicit) for one of the child's calls: it must
   * name an execute request open in this child; asked through that call's
   * host answer (which checks the request and the answer), ended when the
   * call ends or the host aborts it.
   */
  #answerQuestion(message: Extract<ChildToHost, { type: 'elicit' }>, child: Child): void {
    const pending = this.#pending.get(message.id);
    if (!pending?.accepts.has('executed'))
      return this.#kill(
        ToolErrors.processBrokeProtocol(`it asked a question for request ${message.id}, which is not a running call`),
      );
    const ask = pending.elicit;
    pending.ended ??= new AbortController();
    relayAnswer(ask ? ask(message.request, pending.ended.signal) : noOneToAsk(), message.qid, (reply) => {
      if (child === this.#child) this.#replyTo(child, { type: 'host-reply', ...reply });
    });
  }

  /**
   * A reply to what the child sent (a host call, a question). A child reads
   * its channel as frames come; one that stops reading while it keeps
   * asking (each ask answered, if only with a refusal) would pile the
   * replies up here without bound: past MAX_UNREAD_REPLY_BYTES (or four of
   * the largest result a running call may send) it is killed.
   */
  #replyTo(child: Child, message: HostToChild): void {
    const unread = child.toChild.writableLength;
    if (child === this.#child && unread > Math.max(MAX_UNREAD_REPLY_BYTES, 4 * this.#largestRunningResultBytes()))
      return this.#kill(ToolErrors.processBrokeProtocol(`it left ${unread} bytes of the host's replies unread`));
    write(child, message);
  }

  /** The host call does not say which of the child's calls made it: the most any of them may send bounds it. */
  #largestRunningResultBytes(): number {
    let largest = 0;
    for (const pending of this.#pending.values())
      if (pending.accepts.has('executed')) largest = Math.max(largest, pending.maxUpdateBytes ?? 0);
    return largest;
  }

  /**
   * Every request still in the dead child gets an error result; the next
   * request starts a new child at once. The error waits for the end of the
   * child's stderr, which says whether it ran out of memory.
   */
  #onExit(child: Child, code: number | null, signal: NodeJS.Signals | null): void {
    killGroup(child.process); // what the child left running in its session
    if (this.#child !== child) return; // an older child; its requests were already failed
    const requests = this.#detach(child);
    // Their verdict is the child's exit now, not a deadline that would kill the next child; their questions end now.
    for (const pending of requests.values()) {
      clearTimeout(pending.deadline);
      pending.ended?.abort();
    }
    if (this.#closing) return this.#fail(requests, ToolErrors.poolClosed(), 'CLOSED');
    // The child's cap is shared by its calls: with one call in it the memory was that call's; with several, whose is not known.
    const running = [...requests.values()].filter((pending) => pending.accepts.has('executed')).length;
    const verdict = child.stderr.outOfMemory().then((outOfMemory) => {
      const died = exitSignal(child, code, signal);
      if (outOfMemory && running <= 1) this.#fail(requests, ToolErrors.memoryLimit(this.maxMemoryMb), 'MEMORY_LIMIT');
      else if (outOfMemory) this.#fail(requests, ToolErrors.processOutOfMemory(this.maxMemoryMb, running), 'CRASHED');
      else this.#fail(requests, ToolErrors.processDied(died.signal, died.code), 'CRASHED');
    });
    this.#verdicts.add(verdict);
    void verdict.finally(() => this.#verdicts.delete(verdict));
  }

  /** The channel keeps the host alive only while calls are in flight. */
  #refWhileBusy(child: Child): void {
    if (this.#pending.size > 0) {
      child.process.ref();
      child.toChild.ref();
      child.fromChild.ref();
    } else {
      child.process.unref();
      child.toChild.unref();
      child.fromChild.unref();
    }
  }
}

/**
 * Ends a call's questions (its abort). The signal is made on first need, by
 * a question or by this: aborting one on every call's end made a
 * DOMException, with its stack trace, per call.
 */
function endQuestions(pending: Pending | undefined): void {
  if (pending?.elicit) (pending.ended ??= new AbortController()).abort();
}

function write(child: Child, message: HostToChild): void {
  if (child.toChild.destroyed) return;
  child.toChild.write(encodeFrame(message));
}

function closeChannel(child: Child): void {
  child.toChild.destroy();
  child.fromChild.destroy();
}

/** A launcher that reports signal deaths as 128 + N (bwrap) gets its signal named again. */
function exitSignal(child: Child, code: number | null, signal: NodeJS.Signals | null): ExitStatus {
  return exitStatus(code, signal, child.signalsAsExitCodes);
}

function exitName(child: Child, code: number | null, signal: NodeJS.Signals | null): string {
  const died = exitSignal(child, code, signal);
  return String(died.signal ?? died.code);
}

/**
 * The child's figures, bounded by what the host measured: no more running
 * time or CPU than the wall time the host waited for the answer, a heap
 * within the worker's limit, and no cpuMs where the line cannot read one
 * (the child runs the same Node: a figure there was made up).
 */
function boundedUsage(outcome: RunOutcome, wallMs: number, maxMemoryMb: number): RunOutcome {
  const { usage } = outcome;
  if (!usage) return outcome;
  const runningMs = Math.min(usage.runningMs, wallMs);
  const bounded: RunUsage = { queuedMs: Math.min(usage.queuedMs, wallMs - runningMs), runningMs };
  if (HOST_READS_CPU && usage.cpuMs !== undefined) bounded.cpuMs = Math.min(usage.cpuMs, runningMs);
  if (usage.heapUsedBytes !== undefined && usage.heapUsedBytes <= heapBoundBytes(maxMemoryMb))
    bounded.heapUsedBytes = usage.heapUsedBytes;
  return { ...outcome, usage: bounded };
}

/** The process cap shows up as a failed Buffer allocation inside the tool: name the limit. */
function withProcessMemoryMessage(outcome: RunOutcome, maxMemoryMb: number): RunOutcome {
  if (
    !outcome.ok &&
    (saysOutOfMemory(outcome.error) || /ERR_MEMORY_ALLOCATION_FAILED|Cannot allocate memory/.test(outcome.error))
  ) {
    return failedRun(outcome, ToolErrors.memoryLimit(maxMemoryMb), 'MEMORY_LIMIT');
  }
  return outcome;
}

/** The worker entry, compiled here when toolpool runs from TypeScript sources (the child may not start esbuild). */
async function precompiledForChild(): Promise<Record<string, RuntimeFile>> {
  const extension = extname(fileURLToPath(import.meta.url));
  if (extension !== '.ts') return {};
  const workerEntry = fileURLToPath(new URL(`../worker/runtime/tool-worker${extension}`, import.meta.url));
  return { [workerEntry]: await runtimeFile(workerEntry) };
}

function childEntryFile(): Promise<string> {
  return childModule('process-child');
}

/** A module of this folder as a file the child can load (compiled into the cache when running from sources). */
async function childModule(name: string): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableRuntime(fileURLToPath(new URL(`./${name}${extension}`, import.meta.url)));
}
