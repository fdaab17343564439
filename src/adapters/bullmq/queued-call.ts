import { RemoteErrors, ToolErrors, errorMessage } from '../../core/errors.ts';
import { isWeakerIsolation } from '../../isolation/strength.ts';
import type { RemoteOutcome } from '../../core/remote.ts';
import type { Executor, ToolEndEvent, ToolEvent } from '../../index.ts';
import { CONTEXT_RUN_ID } from '../../executor/batch.ts';
import type { CallData } from './protocol.ts';
import type { UpdateRelay } from './update-relay.ts';

/** What a worker machine needs of its executor. */
export type ServedExecutor = Pick<Executor, 'executeBatch' | 'metadata'>;

/**
 * Why this machine must not run the call, or undefined: it has no such
 * tool, another version of its module, or would run it in a weaker tier
 * than the host asked for.
 */
export function refusal(executor: ServedExecutor, call: CallData): string | undefined {
  const tool = executor.metadata.get(call.tool);
  if (!tool) return RemoteErrors.toolMissing(call.tool, [...executor.metadata.keys()]);
  if (tool.moduleHash !== call.moduleHash)
    return RemoteErrors.versionsDiffer(call.tool, call.moduleHash, tool.moduleHash);
  if (isWeakerIsolation(tool.isolation, call.isolation))
    return RemoteErrors.isolationTooWeak(call.tool, call.isolation, tool.isolation);
  return undefined;
}

/**
 * Runs one call from the queue through the local executor, as one batch:
 * its arguments validated again (anyone who can write to Redis can add a
 * job), not prepared again (the host did), with the tighter of the host's
 * limits and this machine's, and its approval taken as given (the host's
 * gate decided; see README on Redis as a trust boundary). Its updates go
 * to `relay`.
 */
export async function runQueuedCall(
  executor: ServedExecutor,
  call: CallData,
  signal: AbortSignal,
  relay: UpdateRelay,
): Promise<RemoteOutcome> {
  let end: ToolEndEvent | undefined;
  const onEvent = (event: ToolEvent) => {
    if (event.type === 'tool_update') relay.send(event.partial);
    else if (event.type === 'tool_end') end = event;
  };
  let batch;
  try {
    batch = await executor.executeBatch([{ id: call.callId, name: call.tool, arguments: call.args }], {
      signal,
      limits: call.limits,
      prepared: true,
      approvals: { approved: [call.callId] },
      onEvent,
      ...(call.runId !== undefined ? { [CONTEXT_RUN_ID]: call.runId } : {}),
    });
  } catch (error) {
    return { ok: false, error: ToolErrors.workerCrashed(errorMessage(error)) };
  }
  const message = batch.results[0]!;
  const usage = end && end.runningMs > 0 ? usageOf(end) : undefined;
  const outcome: RemoteOutcome = message.isError
    ? { ok: false, error: message.content.map((part) => (part.type === 'text' ? part.text : '')).join('') }
    : {
        ok: true,
        result: {
          content: message.content,
          ...(message.details !== undefined ? { details: message.details } : {}),
          ...(batch.terminate ? { terminate: true } : {}),
        },
      };
  return usage ? { ...outcome, usage } : outcome;
}

function usageOf({ queuedMs, runningMs, cpuMs, heapUsedBytes }: ToolEndEvent) {
  return {
    queuedMs,
    runningMs,
    ...(cpuMs !== undefined ? { cpuMs } : {}),
    ...(heapUsedBytes !== undefined ? { heapUsedBytes } : {}),
  };
}
