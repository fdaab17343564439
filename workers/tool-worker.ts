/**
 * The piscina worker entry. Loads tool modules, runs `prepareArguments` and
 * `execute`, relays progress on this worker's own channel and reports every
 * failure as data. An error a tool raises outside its promise (a timer, a
 * late rejection) is pinned to the call whose code raised it through
 * AsyncLocalStorage, and dropped if that call already settled, so it is
 * never blamed on a later, innocent call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { MessageChannel, parentPort, threadId, workerData } from 'node:worker_threads';
import { wrap, type Remote } from 'comlink/dist/esm/comlink.mjs';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { errorMessage } from '../src/errors.ts';
import { CallTable, type CallTableMemory } from '../src/pool/call-table.ts';
import {
  WORKER_HELLO,
  type AbortMessage,
  type PreloadMessage,
  type DescribeReply,
  type DescribeTask,
  type PrepareTask,
  type ExecuteReply,
  type ExecuteTask,
  type PrepareReply,
  type ApprovalReply,
  type ApprovalTask,
  type WorkerHello,
  type WorkerTask,
} from '../src/pool/protocol.ts';
import type { Tool } from '../src/tool.ts';
import { describeModule, loadedTool, loadTool } from './tool-loader.ts';
import { RunningCall } from './running-call.ts';

const table = new CallTable((workerData as { callTable: CallTableMemory }).callTable);
const running = new Map<number, RunningCall>();
const currentCall = new AsyncLocalStorage<RunningCall>();

const progress = new MessageChannel();
const hostCalls = new MessageChannel();
const hello: WorkerHello = { [WORKER_HELLO]: true, threadId, port: progress.port2, hostPort: hostCalls.port2 };
parentPort!.postMessage(hello, [progress.port2, hostCalls.port2]);
progress.port1.on('message', (message: AbortMessage | PreloadMessage) => {
  if ('preload' in message) for (const ref of message.preload) loadTool(ref).catch(() => undefined);
  else running.get(message.runId)?.abort(message.reason);
});
progress.port1.unref();
const host = wrap<Record<string, (...args: unknown[]) => Promise<unknown>>>(nodeEndpoint(hostCalls.port1));
hostCalls.port1.unref();

process.on('uncaughtException', attributeToCall);
process.on('unhandledRejection', attributeToCall);

function attributeToCall(error: unknown): void {
  const call = currentCall.getStore();
  if (call && !call.settled) return call.fail(error);
  // The call that raised it has already settled (or none did): report, never blame another call.
  process.emitWarning(`toolpool: a tool raised an error after its call ended: ${errorMessage(error)}`, 'ToolpoolLateError');
}

type Reply = DescribeReply | PrepareReply | ApprovalReply | ExecuteReply;

/** Synchronous when it can be: a cheap tool that is already loaded is answered without a promise. */
export default function handle(task: WorkerTask): Reply | Promise<Reply> {
  switch (task.op) {
    case 'describe':
      return describe(task);
    case 'prepare':
      return prepare(task);
    case 'needsApproval':
      return needsApproval(task);
    case 'execute':
      return execute(task);
  }
}

async function describe(task: DescribeTask): Promise<DescribeReply> {
  try {
    return { ok: true, info: await describeModule(task) };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

async function prepare(task: PrepareTask): Promise<PrepareReply> {
  try {
    const tool = await loadTool(task);
    return { ok: true, args: tool.prepareArguments!(task.raw) };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

async function needsApproval(task: ApprovalTask): Promise<ApprovalReply> {
  try {
    const tool = await loadTool(task);
    const answer: unknown = await (tool.needsApproval as (args: Record<string, unknown>) => unknown)(task.args);
    // Only a boolean is an answer; anything else the host reports as the tool's mistake.
    return { ok: true, answer: typeof answer === 'boolean' ? answer : String(answer) };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

function execute(task: ExecuteTask): ExecuteReply | Promise<ExecuteReply> {
  const tool = loadedTool(task);
  if (tool) return runCall(task, tool);
  return loadTool(task).then(
    (loaded) => runCall(task, loaded),
    (error: unknown): ExecuteReply => ({ ok: false, error: errorMessage(error), threadId, updates: 0 }),
  );
}

function runCall(task: ExecuteTask, tool: Tool): ExecuteReply | Promise<ExecuteReply> {
  if (!table.start(task.slot, threadId)) return { cancelled: true };
  const call = new RunningCall(task, threadId, progress.port1, table, callHost);
  running.set(task.runId, call);
  const reply = currentCall.run(call, () => call.run(() => tool.execute(task.args as never, call.context)));
  if (reply instanceof Promise) return reply.finally(() => running.delete(task.runId));
  running.delete(task.runId);
  return reply;
}

/** A comlink call to a function the host granted (`createExecutor({ host })`). */
function callHost(name: string, args: unknown[]): Promise<unknown> {
  return (host as Remote<Record<string, (...a: unknown[]) => Promise<unknown>>>)[name]!(...args);
}
