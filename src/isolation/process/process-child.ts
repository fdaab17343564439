/**
 * The process tier's child: a plain Node process that runs a worker pool
 * for the host and answers over its IPC channel. Whatever a tool does to
 * this process (kill it, exhaust its memory, crash it natively) ends here;
 * the host sees the process die and starts another.
 */
import { closeSync, readdirSync, statSync } from 'node:fs';
import { ElicitErrors, errorMessage } from '../../core/errors.ts';
import { elicitReplyError } from '../../core/elicitation.ts';
import { openHostChannel } from './host-channel.ts';
import { keepInspectorClosed } from '../common/inspector-guard.ts';
import { usePrecompiled } from '../worker/module-compiler.ts';
import { PoolSet } from '../worker/pool-set.ts';
import type { ChildInit, HostToChild } from './process-protocol.ts';

// Before anything else: the tools in this process's workers can signal it.
keepInspectorClosed();

const aborts = new Map<number, AbortController>();
const hostCalls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextHostCall = 1;
let pools: PoolSet | undefined;
/** Past this many open descriptors the child asks to be replaced: what a tool left open would soon break every call here. */
let openFilesBound = Infinity;

const send = openHostChannel(onHostMessage, hostGone);

function onHostMessage(message: HostToChild): void {
  switch (message.type) {
    case 'init': {
      openFilesBound = Math.floor(message.init.maxOpenFiles * 0.75);
      closeInherited(message.init.closeFds ?? []);
      usePrecompiled(message.init.precompiled ?? {});
      const {
        closeFds: _closed,
        hostFunctionNames: _names,
        precompiled: _compiled,
        maxOpenFiles: _files,
        ...options
      } = message.init;
      const execArgv = options.execArgv === 'inherit' ? process.execArgv : options.execArgv;
      // The host marks what this child prints as tool output: its workers' lines go out unmarked.
      pools = new PoolSet({ ...options, execArgv, hostFunctions: hostFunctions(message.init), toolOutputPrefix: '' });
      return send({ type: 'ready' });
    }
    case 'describe':
      return void pools!.describe(message.ref).then(
        (view) => send({ type: 'described', id: message.id, ok: true, view }),
        (error: unknown) => send({ type: 'failed', id: message.id, error: errorMessage(error) }),
      );
    case 'prepare':
      return void pools!.prepare(message.ref, message.raw, message.limits).then(
        (args) => send({ type: 'prepared', id: message.id, ok: true, args }),
        (error: unknown) => send({ type: 'failed', id: message.id, error: errorMessage(error) }),
      );
    case 'needsApproval':
      return void pools!.needsApproval(message.ref, message.args, message.limits).then(
        (answer) => send({ type: 'approvalAnswered', id: message.id, ok: true, answer }),
        (error: unknown) => send({ type: 'failed', id: message.id, error: errorMessage(error) }),
      );
    case 'execute':
      return void execute(message);
    case 'abort':
      return aborts.get(message.id)?.abort();
    case 'host-reply': {
      const pending = hostCalls.get(message.id);
      hostCalls.delete(message.id);
      if (message.ok) pending?.resolve(message.value);
      else pending?.reject(elicitReplyError(message.error, message.code));
      return;
    }
    case 'close':
      return hostGone();
  }
}

/** The host closed the channel, or asked to close: nothing here has anyone to answer to. */
function hostGone(): void {
  void (pools?.close() ?? Promise.resolve()).finally(() => process.exit(0));
}

async function execute(message: Extract<HostToChild, { type: 'execute' }>): Promise<void> {
  const abort = new AbortController();
  aborts.set(message.id, abort);
  const outcome = await pools!.execute(
    {
      callId: message.callId,
      ...(typeof message.runId === 'string' ? { runId: message.runId } : {}),
      args: message.args,
      limits: message.limits,
      measureUsage: message.measureUsage,
      signal: abort.signal,
      onUpdate: (partial) => void send({ type: 'update', id: message.id, partial }),
      // A thread this process cannot end: the host kills the whole process (every thread), which always works.
      onUnstoppable: (error) => void send({ type: 'unstoppable', id: message.id, error }),
      // The host's deadline has room for a thread's verdict only after this notice (see ToolProcess #awaitVerdict).
      onTerminated: () => void send({ type: 'terminated', id: message.id }),
      // The host asks, and ends the question when the call ends there; the worker here ends it for the tool on a stop.
      // A call stopped or over here (its signal fired) asks nothing: the host would still ask for it until it hears of the end.
      elicit: (request, signal) =>
        new Promise((resolve, reject) => {
          if (signal?.aborted) return reject(elicitReplyError(ElicitErrors.ended(), 'TOOLPOOL_ERR_ELICITATION'));
          const qid = nextHostCall++;
          hostCalls.set(qid, { resolve: resolve as (value: unknown) => void, reject });
          send({ type: 'elicit', id: message.id, qid, request });
        }),
    },
    message.ref,
  );
  aborts.delete(message.id);
  // Before the result, so the host has replaced this child by the time the next call is sent.
  checkOpenFiles();
  send({ type: 'executed', id: message.id, outcome });
}

/**
 * Descriptors a tool opened and left open stay open in this process (a
 * worker thread's end does not close them). Counted after each call; past
 * the bound the host is told, and replaces this child.
 */
function checkOpenFiles(): void {
  let open: number;
  try {
    open = openFileCount();
  } catch {
    return; // no procfs: the descriptor cap alone bounds them
  }
  if (open > openFilesBound) send({ type: 'exhausted', openFiles: open });
}

/** Linux 6.2+ gives /proc/self/fd the number of open descriptors as its size; older kernels 0. */
let countBySize = true;

/** The open descriptors: one stat where the kernel counts them, else a listing (an open, reads and a close per call). */
function openFileCount(): number {
  if (countBySize) {
    const size = statSync('/proc/self/fd').size;
    if (size > 0) return size;
    countBySize = false;
  }
  return readdirSync('/proc/self/fd').length;
}

/**
 * Descriptors the host had open without close-on-exec arrive here open; no
 * tool may read through them (the permission model does not check reads
 * from a descriptor), so they go before any tool module is loaded.
 */
function closeInherited(fds: number[]): void {
  for (const fd of fds) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/** Host functions as seen from here: each call travels to the host and back. */
function hostFunctions(init: ChildInit) {
  return Object.fromEntries(
    init.hostFunctionNames.map((name) => [
      name,
      (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          const id = nextHostCall++;
          hostCalls.set(id, { resolve, reject });
          send({ type: 'host-call', id, name, args });
        }),
    ]),
  );
}
