/**
 * Every message from the process tier's child is untrusted: a tool that
 * got hold of the child's main thread could send anything. This checks a
 * message's shape and types before the host reads a field of it, and
 * bounds the texts that end up in results.
 */
import { ToolErrors, truncate } from '../../core/errors.ts';
import { reportedCode, type ToolErrorCode } from '../../core/error-codes.ts';
import { usageProblem } from '../worker/channel-messages.ts';
import { checkPayload } from '../worker/payload.ts';
import type { RunOutcome, RunUsage } from '../../core/runner.ts';
import { problemWithResult } from '../../core/tool-result.ts';
import type { ChildToHost } from './process-protocol.ts';

/** Error texts from the child are cut to this many characters. */
const MAX_ERROR_CHARS = 4_000;

/** Returns the message typed, or a text saying what is wrong with it. */
export function checkChildMessage(message: unknown): ChildToHost | string {
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return 'a message that is not an object';
  const m = message as Record<string, unknown>;
  if (m.type === 'ready') return { type: 'ready' };
  if (m.type === 'exhausted')
    return isCount(m.openFiles)
      ? { type: 'exhausted', openFiles: m.openFiles }
      : 'an "exhausted" message without a descriptor count';
  if (!isId(m.id)) return `a "${String(m.type).slice(0, 40)}" message without a valid id`;
  const id = m.id;
  switch (m.type) {
    case 'described':
      // Its fields are checked on the host like any definition (describeView); here only that it is one.
      return isObject(m.view) && isObject(m.view.definition)
        ? { type: 'described', id, ok: true, view: m.view as never }
        : 'a tool description that is not one';
    case 'prepared':
      return isObject(m.args)
        ? { type: 'prepared', id, ok: true, args: m.args }
        : 'prepared arguments that are not an object';
    case 'approvalAnswered':
      // Any value: the host's approval gate accepts only a boolean and refuses the call otherwise.
      return { type: 'approvalAnswered', id, ok: true, answer: m.answer };
    case 'failed':
      return typeof m.error === 'string'
        ? { type: 'failed', id, error: truncate(m.error, MAX_ERROR_CHARS) }
        : 'a failure without an error text';
    case 'terminated':
      return { type: 'terminated', id };
    case 'unstoppable':
      return typeof m.error === 'string'
        ? { type: 'unstoppable', id, error: truncate(m.error, MAX_ERROR_CHARS) }
        : 'an "unstoppable" message without an error text';
    case 'update':
      return isObject(m.partial)
        ? { type: 'update', id, partial: m.partial as never }
        : 'an update that is not an object';
    case 'executed': {
      const outcome = checkOutcome(m.outcome);
      return typeof outcome === 'string' ? outcome : { type: 'executed', id, outcome };
    }
    case 'elicit':
      // The request is checked (shape, size) where it is answered, like a tool's own.
      return isId(m.qid) && 'request' in m
        ? { type: 'elicit', id, qid: m.qid, request: m.request }
        : 'a question (elicit) without a numeric qid and a request';
    case 'host-call':
      return typeof m.name === 'string' && Array.isArray(m.args)
        ? { type: 'host-call', id, name: m.name, args: m.args }
        : 'a host call without a name and argument list';
    default:
      return `a message of unknown type ${JSON.stringify(String(m.type).slice(0, 40))}`;
  }
}

function checkOutcome(outcome: unknown): RunOutcome | string {
  if (!isObject(outcome)) return 'an outcome that is not an object';
  let checked: RunOutcome;
  if (outcome.ok === false && typeof outcome.error === 'string')
    checked = { ok: false, error: truncate(outcome.error, MAX_ERROR_CHARS), code: reportedCode(outcome.code) };
  else if (outcome.ok === true) checked = { ok: true, result: outcome.result as never };
  else return 'an outcome that is neither a result nor an error';
  if (outcome.usage === undefined) return checked;
  const usage = checkUsage(outcome.usage);
  if (typeof usage === 'string') return `an outcome with ${usage}`;
  checked.usage = usage;
  return checked;
}

/** The child's usage report for a call, checked like a worker's (see usageProblem) and copied field by field. */
export function checkUsage(value: unknown): RunUsage | string {
  const problem = usageProblem(value, ['cpuMs', 'heapUsedBytes'], ['queuedMs', 'runningMs']);
  if (problem) return problem;
  const { queuedMs, runningMs, cpuMs, heapUsedBytes } = value as RunUsage;
  const usage: RunUsage = { queuedMs, runningMs };
  if (cpuMs !== undefined) usage.cpuMs = cpuMs;
  if (heapUsedBytes !== undefined) usage.heapUsedBytes = heapUsedBytes;
  return usage;
}

/**
 * A result as the child sent it, checked again on the host: its shape and
 * its size against `maxResultBytes` (the child's own check could have been
 * skipped by whoever sent it), measured as the worker tier measures it:
 * a shared reference counts each time it appears, because whoever reads the
 * result (the output schema, JSON for the model) expands it. Its serialized
 * size would let a few bytes stand for 2^40 nodes.
 */
export function checkReceivedOutcome(outcome: RunOutcome, maxResultBytes: number): RunOutcome {
  if (!outcome.ok) return outcome;
  const problem = problemWithResult(outcome.result);
  if (problem) return failedRun(outcome, ToolErrors.invalidResult(problem), 'INVALID_RESULT');
  const tooLarge = checkPayload(outcome.result, 'result', maxResultBytes);
  if (tooLarge) return failedRun(outcome, tooLarge, 'RESULT_TOO_LARGE');
  return outcome;
}

/** An error outcome for a call that ran: it keeps what the call used. */
export function failedRun(ran: RunOutcome, error: string, code: ToolErrorCode): RunOutcome {
  return ran.usage ? { ok: false, error, code, usage: ran.usage } : { ok: false, error, code };
}

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) > 0;
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
