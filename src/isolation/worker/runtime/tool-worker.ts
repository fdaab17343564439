/**
 * The piscina worker entry. Loads tool modules, runs `prepareArguments` and
 * `needsApproval` as piscina tasks, and, while it holds a lease (piscina's
 * `serve` task), runs the calls the host sends on this worker's own channel
 * and speaks for each there: start, updates, result, host calls. The channel is made here, before any tool
 * code runs, and handed to the host in the first message on the parent
 * port; the host binds it to this Worker and never accepts another.
 *
 * An error a tool raises outside its promise (a timer, a late rejection) is
 * pinned to the call whose code raised it through AsyncLocalStorage, and
 * dropped if that call already settled. A call that leaves resources behind
 * or changes the shared realm retires this worker (see leftovers.ts and
 * realm-integrity.ts), so nothing it left can hurt a later call.
 */
import { elicitReplyError, type ElicitResult } from '../../../core/elicitation.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { MessageChannel, parentPort, receiveMessageOnPort } from 'node:worker_threads';
import { boundText, errorMessage } from '../../../core/errors.ts';
import { executeTool } from '../../../tools/own-validation.ts';
import {
  WORKER_HELLO,
  type DescribeReply,
  type DescribeTask,
  type ExecuteTask,
  type HostMessage,
  type ServeTask,
  type HostReplyMessage,
  type PrepareReply,
  type ApprovalReply,
  type ApprovalTask,
  type PrepareTask,
  type ResultMessage,
  type WorkerHello,
  type WorkerTask,
} from '../protocol.ts';
import type { Tool } from '../../../core/tool.ts';
import { liveLeftovers, trackAtomicWaits, trackLeftovers } from './leftovers.ts';
import { disableInspector } from './no-inspector.ts';
import { holdPermissionWalls } from './permission-walls.ts';
import { isPromise, postOnPort, promiseThen } from './primordials.ts';
import { realmChange, resetRealmBaseline } from './realm-integrity.ts';
import { trackOpenedFiles } from './opened-files.ts';
import { RunningCall } from './running-call.ts';
import { describeModule, loadedToolByKey, loadTool, toolKey } from './tool-loader.ts';

const running = new Map<number, RunningCall>();
const currentCall = new AsyncLocalStorage<RunningCall>();
/**
 * Calls the host sent ahead, while this worker already runs as many as
 * their tool's concurrency allows: each starts (and writes its seq) when room
 * frees, in the order sent. Sending ahead hides the host's turnaround
 * between calls; a call here has not started, so the host may take it back.
 */
const sentAhead: ExecuteTask[] = [];
/** Calls started here whose result and leftover check are not done. */
let active = 0;
/** The lease this worker holds: its serve task ends when the host releases it. */
let lease: { id: number; end: () => void } | undefined;

const channel = new MessageChannel();
const port = channel.port1;
/** The seq of the last call started here, read by the host when it must know (see start-counter.ts). */
const starts = new SharedArrayBuffer(4);
const startCounter = new Int32Array(starts);
const hello: WorkerHello = { [WORKER_HELLO]: true, port: channel.port2, starts };
parentPort!.postMessage(hello, [channel.port2]);
// Left referenced, so a tool finds it among its active handles like any other port: the host trusts nothing posted on it.
port.on('message', onHostMessage);
/** Taken before any tool code runs, like the primordials. */
const channelListeners = port.listenerCount.bind(port);

/**
 * Files calls may leave open in one worker before it is retired (Node closes
 * a worker's `fs.open` descriptors when its thread ends: piscina keeps
 * `trackUnmanagedFds` on): a tool may keep a file open across its calls, but
 * one that leaks a descriptor per call must not exhaust the process's.
 */
const MAX_FILES_LEFT_OPEN = 32;

/** Set once a call left something behind or changed the realm: this worker takes no further call. */
let retiring: string | undefined;
const hostReplies = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextHostCall = 1;

trackLeftovers(currentCall);
trackAtomicWaits(currentCall);
const openedFiles = trackOpenedFiles(() => currentCall.getStore() !== undefined);
disableInspector();
holdPermissionWalls();
process.on('uncaughtException', attributeToCall);
process.on('unhandledRejection', attributeToCall);
resetRealmBaseline();

function onHostMessage(message: HostMessage): void {
  switch (message?.t) {
    case 'execute':
      return receiveCall(message.task);
    case 'recall':
      return void dropSentAhead(message.runId);
    case 'release':
      if (lease?.id === message.leaseId) endLease();
      return;
    case 'abort':
      if (dropSentAhead(message.runId)) return;
      return running.get(message.runId)?.abort(message.reason);
    case 'ack':
      return running.get(message.runId)?.acknowledge(message.consumed);
    case 'preload':
      for (const ref of message.preload) promiseThen(loadTool(ref), resetRealmBaseline, () => undefined);
      return;
    case 'host-reply':
      return settleHostCall(message);
  }
}

/**
 * Drains the host's messages already queued on the channel, synchronously.
 * Acks are applied at once (they only widen a call's update window); every
 * other message is handled right after the current synchronous code, in the
 * order it came, as if it had arrived by event.
 */
function pollHostMessages(): void {
  for (let received = receiveMessageOnPort(port); received; received = receiveMessageOnPort(port)) {
    const message = received.message as HostMessage;
    if (message?.t === 'ack') onHostMessage(message);
    // Outside the current call's async context: a call it starts must not count as this call's leftover.
    else currentCall.exit(() => queueMicrotask(() => onHostMessage(message)));
  }
}

function attributeToCall(error: unknown): void {
  const call = currentCall.getStore();
  if (call && !call.settled) return call.fail(error);
  // The call that raised it has already settled (or none did): report, never blame another call.
  process.emitWarning(
    `toolpool: a tool raised an error after its call ended: ${boundText(errorMessage(error))}`,
    'ToolpoolLateError',
  );
}

type Reply = DescribeReply | PrepareReply | ApprovalReply | undefined;

/** Synchronous when it can be: a cheap tool that is already loaded is answered without a promise. */
export default function handle(task: WorkerTask): Reply | Promise<Reply> {
  switch (task.op) {
    case 'describe':
      return describe(task);
    case 'prepare':
      return prepare(task);
    case 'needsApproval':
      return needsApproval(task);
    case 'serve':
      return serve(task);
  }
}

/** Holds the lease until the host releases it (or this worker must retire): until then piscina counts this worker busy. */
function serve(task: ServeTask): Promise<undefined> | undefined {
  if (retiring || lease) return undefined; // the host sees the lease end at once and asks again
  return new Promise<undefined>((resolve) => {
    lease = { id: task.leaseId, end: () => resolve(undefined) };
    postOnPort(port, { t: 'serving', leaseId: task.leaseId });
  });
}

function endLease(): void {
  const ending = lease;
  lease = undefined;
  ending?.end();
}

async function describe(task: DescribeTask): Promise<DescribeReply> {
  try {
    const view = await describeModule(task);
    resetRealmBaseline();
    return { ok: true, view };
  } catch (error) {
    return { ok: false, error: boundText(errorMessage(error)) };
  }
}

async function prepare(task: PrepareTask): Promise<PrepareReply> {
  try {
    const tool = await loadTool(task);
    return { ok: true, args: tool.prepareArguments!(task.raw) };
  } catch (error) {
    return { ok: false, error: boundText(errorMessage(error)) };
  }
}

async function needsApproval(task: ApprovalTask): Promise<ApprovalReply> {
  try {
    const tool = await loadTool(task);
    const answer: unknown = await (tool.needsApproval as (args: Record<string, unknown>) => unknown)(task.args);
    // Only a boolean is an answer; anything else the host reports as the tool's mistake.
    return { ok: true, answer: typeof answer === 'boolean' ? answer : String(answer) };
  } catch (error) {
    return { ok: false, error: boundText(errorMessage(error)) };
  }
}

function receiveCall(task: ExecuteTask): void {
  sentAhead.push(task);
  startSentAhead();
}

/** Starts the calls sent ahead while there is room; a retiring worker refuses them all (the host sends them elsewhere). */
function startSentAhead(): void {
  while (sentAhead.length > 0) {
    if (retiring) {
      for (const task of sentAhead.splice(0)) refuse(task.runId);
      return;
    }
    if (active >= (sentAhead[0]!.concurrency ?? 1)) return;
    if (channelOverheard()) {
      retireSelf('a listener was left on its channel'); // the loop refuses the calls waiting here
      continue;
    }
    const done = execute(sentAhead.shift()!);
    if (done !== undefined) promiseThen(done, callEnded, callEnded);
    else active--;
  }
}

function callEnded(): void {
  active--;
  startSentAhead();
}

/** A call sent ahead and not started is dropped (aborted, or taken back for an idle worker); the host hears it did not start. */
function dropSentAhead(runId: number): boolean {
  const index = sentAhead.findIndex((task) => task.runId === runId);
  if (index < 0) return false;
  sentAhead.splice(index, 1);
  refuse(runId);
  return true;
}

function refuse(runId: number): void {
  postOnPort(port, { t: 'refused', runId });
}

/** The tools that have had a call in this worker (the host counts their first call's import as loading time until told). */
const announced = new Set<string>();

/**
 * Whether something besides the runtime listens on the channel: it would see
 * every later call's arguments and could answer them. Checked when a call
 * ends and again before the next starts (a listener added by a microtask the
 * call left runs after the first check).
 */
function channelOverheard(): boolean {
  return channelListeners('message') !== 1;
}

/** Runs a call; the returned promise ends once the call's leftovers have been looked at (undefined: done already). */
function execute(task: ExecuteTask): undefined | Promise<undefined> {
  active++;
  Atomics.store(startCounter, 0, task.seq);
  const key = toolKey(task); // for a factory tool, a JSON text of its options: made once per call
  const tool = loadedToolByKey(key);
  if (tool && announced.has(key)) return finish(runCall(task, tool));
  if (tool) return announceThen(task, tool);
  return promiseThen(
    loadTool(task),
    (loaded) => {
      resetRealmBaseline();
      return announceThen(task, loaded);
    },
    (error: unknown) =>
      void postOnPort(port, { t: 'result', runId: task.runId, ok: false, error: boundText(errorMessage(error)) }),
  ) as Promise<undefined>;
}

/** The first call of a tool here: the host hears the module is loaded, so the call's timeout counts from now. */
function announceThen(task: ExecuteTask, tool: Tool): undefined | Promise<undefined> {
  announced.add(toolKey(task)); // once per tool and worker
  postOnPort(port, { t: 'loaded', runId: task.runId });
  return finish(runCall(task, tool));
}

function runCall(task: ExecuteTask, tool: Tool): { call: RunningCall; reply: ResultMessage | Promise<ResultMessage> } {
  const call = new RunningCall(task, port, callHost, pollHostMessages, askHost);
  running.set(task.runId, call);
  const reply = currentCall.run(call, () => call.run(() => executeTool(tool, task.args, call.context)));
  return { call, reply };
}

function finish({
  call,
  reply,
}: {
  call: RunningCall;
  reply: ResultMessage | Promise<ResultMessage>;
}): undefined | Promise<undefined> {
  if (!isPromise(reply)) return send(call, reply);
  return promiseThen(
    reply,
    (message) => send(call, message),
    () => undefined,
  ) as Promise<undefined>;
}

/**
 * Posts the result, saying whether this worker must be retired: a call that
 * left resources alive or changed the realm. Timers and immediates that are
 * done say so at once; any other resource is looked at again one turn later,
 * when destroy hooks have run.
 */
function send(call: RunningCall, message: ResultMessage): undefined | Promise<undefined> {
  running.delete(call.task.runId);
  const changed = realmChange() ?? (channelOverheard() ? 'the call left a listener on its channel' : undefined);
  if (changed) return retireAfter(message, changed);
  const live = liveLeftovers(call);
  if (live.certain > 0) return retireAfter(message, `the call left ${live.certain} timer(s) or wait(s) pending`);
  if (openedFiles.leftOpenByCalls > MAX_FILES_LEFT_OPEN)
    return retireAfter(message, `its calls left ${openedFiles.leftOpenByCalls} files open`);
  post(message);
  if (live.uncertain === 0) return undefined;
  // Looked at again once destroy hooks have run.
  return new Promise<undefined>((resolve) =>
    setImmediate(() => {
      const still = liveLeftovers(call).uncertain;
      if (still > 0) retireSelf(`the call left ${still} handle(s) open`);
      resolve(undefined);
    }),
  );
}

function retireAfter(message: ResultMessage, reason: string): undefined {
  retiring = reason;
  endLease();
  return post({ ...message, retire: reason });
}

/** This worker asks the host to retire it; until the host does, it takes no call. */
function retireSelf(reason: string): void {
  retiring = reason;
  endLease();
  postOnPort(port, { t: 'retire', runId: 0, reason });
}

function post(message: ResultMessage): undefined {
  postOnPort(port, message);
  return undefined;
}

/** A host function call on the channel; the host runs only functions it listed. */
function callHost(call: RunningCall, name: string, args: unknown[]): Promise<unknown> {
  const id = nextHostCall++;
  return new Promise((resolve, reject) => {
    hostReplies.set(id, { resolve, reject });
    try {
      postOnPort(port, { t: 'host-call', runId: call.task.runId, id, name, args });
    } catch (error) {
      hostReplies.delete(id);
      reject(new Error(`Host call ${name}() failed: its arguments cannot be sent (${errorMessage(error)})`));
    }
  });
}

function settleHostCall(message: HostReplyMessage): void {
  const pending = hostReplies.get(message.id);
  if (!pending) return;
  hostReplies.delete(message.id);
  if (message.ok) pending.resolve(message.value);
  else pending.reject(elicitReplyError(String(message.error), message.code));
}

/** A tool's question (ctx.elicit) on the channel, answered like a host call; the host checks the request and the answer. */
function askHost(call: RunningCall, request: unknown): Promise<ElicitResult> {
  const id = nextHostCall++;
  return new Promise((resolve, reject) => {
    hostReplies.set(id, { resolve: resolve as (value: unknown) => void, reject });
    try {
      postOnPort(port, { t: 'elicit', runId: call.task.runId, id, request });
    } catch (error) {
      hostReplies.delete(id);
      reject(
        elicitReplyError(
          `ctx.elicit() refused: the request cannot be sent (${errorMessage(error)}).`,
          'TOOLPOOL_ERR_ELICITATION',
        ),
      );
    }
  });
}
