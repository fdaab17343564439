import { spawn, type ChildProcess } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolErrors, errorMessage } from '../errors.ts';
import { toRunnableModule } from '../pool/module-compiler.ts';
import { HostCallGate, HostFunctionTable, type HostCallReply } from '../pool/host-functions.ts';
import { checkPayload } from '../pool/payload.ts';
import type { ModuleTask } from '../pool/protocol.ts';
import { withQueuedBefore, type RunJob, type RunOutcome } from '../runner.ts';
import type { ToolInfo } from '../tool-info.ts';
import type { HostFunctions } from '../tool.ts';
import { processLauncher, type ChildLauncher, type ChildSpec } from './child-launcher.ts';
import { checkChildMessage, checkReceivedOutcome, failedRun } from './child-messages.ts';
import { inheritableFds } from './inherited-fds.ts';
import { CHILD_CODE_RANGE_MB, childDataCapBytes, nodeReservation } from './node-reservation.ts';
import type { ChildInit, ChildToHost, HostToChild } from './process-protocol.ts';
import type { PrepareLimits, ToolTier } from './tier.ts';

export interface ProcessTierOptions extends Omit<ChildInit, 'hostFunctionNames' | 'closeFds' | 'codeRangeSizeMb'> {
  hostFunctions: HostFunctions;
  /** How the child is started (default: `processLauncher`, prlimit + node; the sandbox tier wraps it in bwrap). */
  launcher?: ChildLauncher;
  /** Flags of the child's own Node process, before its entry file: its permission flags. */
  childFlags?: string[];
  /** Load child-worker-guard first in the child (with permissions: no unrestricted worker even from its main thread). */
  guardWorkers?: boolean;
  /** What the child must read and write besides Node itself; see `ChildSpec`. */
  readPaths?: string[];
  writePaths?: string[];
  net?: boolean | readonly string[];
}

const CLOSE_GRACE_MS = 2_000;
const STDERR_TAIL_CHARS = 4_096;
/** How V8 and Node say that the data cap was reached, when they abort instead of throwing. */
const OUT_OF_MEMORY = /Fatal process out of memory[^\n]*|Allocation failed[^\n]*|Failed to reserve virtual memory[^\n]*|Array buffer allocation failed|Failed to allocate memory/i;
/** How long a child may take to start and answer its init. */
const START_DEADLINE_MS = 20_000;
/** Added to every request's own bound before the host gives up on the child. */
const DEADLINE_MARGIN_MS = 5_000;

/**
 * Runs module tools in worker threads of a child Node process, one child
 * per memory limit, started on first use and reused. The child has a clean
 * environment, no inherited descriptors, a cap on its whole data segment
 * (Buffers included) and, with permissions, the permission flags on its
 * own main thread too. So a tool that kills its process, exhausts memory or
 * crashes natively takes down only the child; the calls running there get
 * error results and the next call starts a fresh child.
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

  needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    return this.#child(limits.maxMemoryMb).needsApproval(ref, args, limits);
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

/** A request in flight: the replies it accepts, and the host-side deadline after which the child is killed. */
type Pending = {
  accepts: ReadonlySet<ChildToHost['type']>;
  resolve: (message: ChildToHost) => void;
  onUpdate?: RunJob['onUpdate'];
  maxUpdateBytes?: number;
  deadline: NodeJS.Timeout;
};

type Expect = {
  accepts: ChildToHost['type'][];
  what: string;
  deadlineMs: number;
  onUpdate?: RunJob['onUpdate'];
  maxUpdateBytes?: number;
  /** Told when the request went to the child (after the child started). */
  onSent?: () => void;
};

/** One child process (respawned after it dies) and the requests in flight in it. */
class ToolProcess {
  #process: Promise<ChildProcess> | undefined;
  #child: ChildProcess | undefined;
  readonly #pending = new Map<number, Pending>();
  readonly #hostFunctions: HostFunctionTable;
  readonly #hostCalls = new WeakMap<ChildProcess, HostCallGate>();
  #nextId = 1;
  #closing = false;
  /** The end of the current child's stderr: V8 prints why it aborted there. */
  #stderrTail = '';

  constructor(
    private readonly options: ProcessTierOptions,
    private readonly maxMemoryMb: number,
  ) {
    this.#hostFunctions = new HostFunctionTable(options.hostFunctions);
  }

  async describe(ref: ModuleTask): Promise<ToolInfo> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request({ type: 'describe', id, ref }, { accepts: ['described'], what: 'describe', deadlineMs });
    if (reply.type === 'described') return reply.info;
    throw new Error(reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async prepare(ref: ModuleTask, raw: Record<string, unknown>, limits: PrepareLimits): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request({ type: 'prepare', id, ref, raw, limits }, { accepts: ['prepared'], what: 'prepare', deadlineMs });
    if (reply.type === 'prepared') return reply.args;
    throw new Error(reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async needsApproval(ref: ModuleTask, args: Record<string, unknown>, limits: PrepareLimits): Promise<unknown> {
    const id = this.#nextId++;
    const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + DEADLINE_MARGIN_MS;
    const reply = await this.#request({ type: 'needsApproval', id, ref, args, limits }, { accepts: ['approvalAnswered'], what: 'needsApproval', deadlineMs });
    if (reply.type === 'approvalAnswered') return reply.answer;
    throw new Error(reply.type === 'failed' ? reply.error : 'unexpected reply');
  }

  async execute(job: RunJob, ref: ModuleTask): Promise<RunOutcome> {
    if (job.signal?.aborted) return { ok: false, error: ToolErrors.abortedBeforeStart() };
    const handedAt = performance.now();
    let sentAt = handedAt;
    const id = this.#nextId++;
    // The child runs the two-step stop itself; the host passes the abort on and bounds how long the child may take.
    const onAbort = () => {
      this.#send({ type: 'abort', id });
      this.#shortenDeadline(id, job.limits.abortGraceMs + DEADLINE_MARGIN_MS, 'execute');
    };
    job.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { callId, args, limits } = job;
      const deadlineMs = this.options.loadTimeoutMs + limits.timeoutMs + limits.abortGraceMs + DEADLINE_MARGIN_MS;
      const onSent = () => (sentAt = performance.now());
      const expect = { accepts: ['executed', 'update'] as ChildToHost['type'][], what: 'execute', deadlineMs, maxUpdateBytes: limits.maxResultBytes, onSent, ...(job.onUpdate ? { onUpdate: job.onUpdate } : {}) };
      const reply = await this.#request({ type: 'execute', id, ref, callId, args, limits, measureUsage: job.measureUsage !== false }, expect);
      if (reply.type === 'failed') return { ok: false, error: reply.error };
      if (reply.type !== 'executed') return { ok: false, error: ToolErrors.workerCrashed('unexpected reply') };
      // The child timed the call from when it got it; waiting here for the child to start was queue time too.
      const outcome = withQueuedBefore(reply.outcome, sentAt - handedAt);
      return withProcessMemoryMessage(checkReceivedOutcome(outcome, limits.maxResultBytes), this.maxMemoryMb);
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
    const timer = setTimeout(() => killGroup(child), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
    killGroup(child); // whatever the child left running in its session goes too
  }

  async #request(request: HostToChild & { id: number }, expect: Expect): Promise<ChildToHost> {
    const { id } = request;
    if (this.#closing) return { type: 'failed', id, error: ToolErrors.poolClosed() };
    const reply = new Promise<ChildToHost>((resolve) => {
      const deadline = setTimeout(() => this.#kill(ToolErrors.processUnresponsive(expect.what, expect.deadlineMs), id), expect.deadlineMs);
      const { onUpdate, maxUpdateBytes } = expect;
      this.#pending.set(id, { accepts: new Set([...expect.accepts, 'failed']), resolve, deadline, ...(onUpdate ? { onUpdate } : {}), ...(maxUpdateBytes ? { maxUpdateBytes } : {}) });
    });
    try {
      const child = await this.#started();
      this.#refWhileBusy(child);
      child.send(request);
      expect.onSent?.();
    } catch (error) {
      this.#settle(id, { type: 'failed', id, error: ToolErrors.processCouldNotStart(errorMessage(error)) });
    }
    return reply;
  }

  #settle(id: number, message: ChildToHost): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    clearTimeout(pending.deadline);
    this.#pending.delete(id);
    if (this.#child) this.#refWhileBusy(this.#child);
    pending.resolve(message);
  }

  #shortenDeadline(id: number, ms: number, what: string): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    clearTimeout(pending.deadline);
    pending.deadline = setTimeout(() => this.#kill(ToolErrors.processUnresponsive(what, ms), id), ms);
  }

  /**
   * Kills the child for a reason of the host's (a missed deadline, a broken
   * protocol): the call that showed it gets `error`, the others running in
   * the same child an error saying why it was killed; the next call starts
   * a fresh child.
   */
  #kill(error: string, culprit?: number): void {
    if (culprit !== undefined) this.#settle(culprit, { type: 'failed', id: culprit, error });
    const child = this.#child;
    if (child) this.#retire(child, ToolErrors.processKilledForOther(`another request made it stop: ${error}`));
    if (child) killGroup(child);
  }

  /** Forgets the current child at once (the next request starts a new one) and fails what was running in it. */
  #retire(child: ChildProcess, error: string): void {
    if (this.#child !== child) return; // an older child; its requests were already failed
    this.#process = undefined;
    this.#child = undefined;
    for (const id of [...this.#pending.keys()]) this.#settle(id, { type: 'failed', id, error });
  }

  #send(message: HostToChild): void {
    void this.#process?.then((child) => child.connected && child.send(message)).catch(() => undefined);
  }

  #started(): Promise<ChildProcess> {
    if (this.#process) return this.#process;
    const starting: Promise<ChildProcess> = this.#spawn().catch((error: unknown) => {
      // Only this start is forgotten: a child killed while starting may already have a successor.
      if (this.#process === starting) this.#process = undefined;
      throw error;
    });
    this.#process = starting;
    return starting;
  }

  async #spawn(): Promise<ChildProcess> {
    const launcher = this.options.launcher ?? processLauncher;
    const launch = await launcher.launch(await this.#spec());
    const child = spawn(launch.command, launch.args, launch.options);
    this.#child = child;
    this.#stderrTail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      process.stderr.write(chunk);
      this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
    });
    child.on('message', (message: unknown) => this.#onMessage(message, child));
    child.on('exit', (code, signal) => this.#onExit(child, code, signal));
    child.once('exit', () => launch.cleanup?.());
    child.on('error', () => undefined); // a failed spawn also emits 'exit'
    const init = await this.#init();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(child);
        reject(new Error(`it did not answer within ${START_DEADLINE_MS} ms`));
      }, START_DEADLINE_MS);
      child.once('message', (message: unknown) => {
        clearTimeout(timer);
        const checked = checkChildMessage(message);
        if (typeof checked !== 'string' && checked.type === 'ready') return resolve();
        killGroup(child);
        reject(new Error('its first message was not "ready"'));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        const why = OUT_OF_MEMORY.exec(this.#stderrTail)?.[0];
        reject(new Error(`it exited (${signal ?? code}) during start${why ? `: ${why}` : ''}`));
      });
      child.send({ type: 'init', init });
    });
    return child;
  }

  async #spec(): Promise<ChildSpec> {
    const entry = await childEntryFile();
    const { env, childFlags = [], readPaths = [], writePaths = [], net, maxWorkers, guardWorkers } = this.options;
    const guard = guardWorkers ? [`--import=${await childModule('child-worker-guard')}`] : [];
    return {
      node: process.execPath,
      nodeArgs: [...childFlags, ...guard, entry],
      env,
      memoryCapBytes: childDataCapBytes(await nodeReservation(), maxWorkers, this.maxMemoryMb),
      maxMemoryMb: this.maxMemoryMb,
      readPaths: [entry, ...readPaths],
      writePaths,
      ...(net !== undefined ? { net } : {}),
    };
  }

  /** What the child is told at start: only the fields of `ChildInit`, never the host functions themselves. */
  async #init(): Promise<ChildInit> {
    const { minWorkers, maxWorkers, idleTimeoutMs, env, execArgv, defaultMemoryMb, loadTimeoutMs, hostFunctions } = this.options;
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
      closeFds: inheritableFds(),
      precompiled: await precompiledForChild(),
    };
  }

  /** Everything from the child is checked, and must answer a request of this host that is still open. */
  #onMessage(raw: unknown, child: ChildProcess): void {
    if (child !== this.#child) return;
    const message = checkChildMessage(raw);
    if (typeof message === 'string') return this.#kill(ToolErrors.processBrokeProtocol(`it sent ${message}`));
    if (message.type === 'ready') return;
    if (message.type === 'host-call') return this.#answerHostCall(message, child);
    const pending = this.#pending.get(message.id);
    if (!pending || !pending.accepts.has(message.type)) {
      return this.#kill(ToolErrors.processBrokeProtocol(`it sent "${message.type}" for request ${message.id}, which ${pending ? 'expects another reply' : 'is not open'}`));
    }
    if (message.type === 'update') return this.#relayUpdate(message, pending);
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
  #answerHostCall(message: Extract<ChildToHost, { type: 'host-call' }>, child: ChildProcess): void {
    let gate = this.#hostCalls.get(child);
    if (!gate) {
      const send = (reply: HostCallReply) => void (child.connected && child.send({ type: 'host-reply', ...reply }));
      this.#hostCalls.set(child, (gate = new HostCallGate(this.#hostFunctions, send)));
    }
    gate.submit(message, this.#largestRunningResultBytes(), () => child === this.#child && this.#pending.size > 0);
  }

  /** The host call does not say which of the child's calls made it: the most any of them may send bounds it. */
  #largestRunningResultBytes(): number {
    let largest = 0;
    for (const pending of this.#pending.values()) if (pending.accepts.has('executed')) largest = Math.max(largest, pending.maxUpdateBytes ?? 0);
    return largest;
  }

  /** Every request still in the dead child gets an error result; the next request starts a new child. */
  #onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    killGroup(child); // what the child left running in its session
    const error = this.#closing
      ? ToolErrors.poolClosed()
      : OUT_OF_MEMORY.test(this.#stderrTail)
        ? ToolErrors.memoryLimit(this.maxMemoryMb)
        : ToolErrors.processDied(signal, code);
    this.#retire(child, error);
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

/** The child leads its own session (see childSpawnOptions): SIGKILL it and everything it started there. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // not a group leader (a launcher without a session of its own), or already gone
  }
}

/** The process cap shows up as a failed Buffer allocation inside the tool: name the limit. */
function withProcessMemoryMessage(outcome: RunOutcome, maxMemoryMb: number): RunOutcome {
  if (!outcome.ok && (OUT_OF_MEMORY.test(outcome.error) || /ERR_MEMORY_ALLOCATION_FAILED|Cannot allocate memory/.test(outcome.error))) {
    return failedRun(outcome, ToolErrors.memoryLimit(maxMemoryMb));
  }
  return outcome;
}

/** The worker entry, compiled here when toolpool runs from TypeScript sources (the child may not start esbuild). */
async function precompiledForChild(): Promise<Record<string, string>> {
  const extension = extname(fileURLToPath(import.meta.url));
  if (extension !== '.ts') return {};
  const workerEntry = fileURLToPath(new URL(`../../workers/tool-worker${extension}`, import.meta.url));
  return { [workerEntry]: await toRunnableModule(workerEntry) };
}

function childEntryFile(): Promise<string> {
  return childModule('process-child');
}

/** A module of this folder as a file the child can load (compiled into the cache when running from sources). */
async function childModule(name: string): Promise<string> {
  const extension = extname(fileURLToPath(import.meta.url));
  return toRunnableModule(fileURLToPath(new URL(`./${name}${extension}`, import.meta.url)));
}
