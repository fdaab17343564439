import type { RunUsage } from '../../core/runner.ts';
import type { WorkerMessage } from './protocol.ts';

/**
 * The shape check of every message a worker posts on its channel: untrusted
 * input. Returns the message, or a short text saying what is wrong with it
 * (the worker is then retired). Payloads (results, updates, host-call
 * arguments) are measured separately against the call's limits.
 */
export function parseWorkerMessage(message: unknown): WorkerMessage | string {
  if (typeof message !== 'object' || message === null || Array.isArray(message))
    return `a message that is not an object (${describe(message)})`;
  if (Object.getPrototypeOf(message) !== Object.prototype) return 'a message that is not a plain object';
  const { t, runId } = message as Record<string, unknown>;
  if (t === 'retire')
    return typeof (message as { reason?: unknown }).reason === 'string'
      ? (message as WorkerMessage)
      : 'a retire message without a reason';
  if (t === 'serving')
    return isRunId((message as { leaseId?: unknown }).leaseId)
      ? (message as WorkerMessage)
      : 'a serving message without a valid leaseId';
  if (!isRunId(runId)) return 'a message without a valid runId';
  switch (t) {
    case 'refused':
    case 'loaded':
      return message as WorkerMessage;
    case 'update':
      return typeof (message as { partial?: unknown }).partial === 'object'
        ? (message as WorkerMessage)
        : 'an update without a partial result';
    case 'result':
      return checkResult(message as Record<string, unknown>);
    case 'host-call':
      return checkHostCall(message as Record<string, unknown>);
    case 'elicit':
      // The request itself is checked (shape, size) on the host where it is answered, like a tool's own.
      return Number.isSafeInteger((message as { id?: unknown }).id) && 'request' in message
        ? (message as WorkerMessage)
        : 'a question (elicit) without a numeric id and a request';
    default:
      return `a message of unknown type ${describe(t)}`;
  }
}

function checkResult(message: Record<string, unknown>): WorkerMessage | string {
  const { ok, error, retire, usage } = message;
  if (typeof ok !== 'boolean') return 'a result without "ok"';
  if (!ok && typeof error !== 'string') return 'a failed result without an error text';
  if (retire !== undefined && typeof retire !== 'string') return 'a result with a malformed "retire"';
  if (usage !== undefined) {
    const problem = usageProblem(usage, WORKER_USAGE);
    if (problem) return `a result with ${problem}`;
  }
  return message as unknown as WorkerMessage;
}

/** The most a usage figure may be: past it (or negative, or not a finite number) it is not a measurement. */
const USAGE_BOUNDS: Readonly<Record<keyof RunUsage, number>> = {
  queuedMs: 1e9,
  runningMs: 1e9,
  cpuMs: 1e9,
  heapUsedBytes: 2 ** 53,
};
/** What a worker may report of a call; the host times the call itself. */
const WORKER_USAGE: readonly (keyof RunUsage)[] = ['cpuMs', 'heapUsedBytes'];

/**
 * Checks a usage report from a worker or from the process tier's child: a
 * plain object whose fields among `optional` and `required` (no other field
 * is ever read) are finite, non-negative numbers within USAGE_BOUNDS.
 * Returns what is wrong with it, or undefined.
 */
export function usageProblem(
  usage: unknown,
  optional: readonly (keyof RunUsage)[],
  required: readonly (keyof RunUsage)[] = [],
): string | undefined {
  if (typeof usage !== 'object' || usage === null || Object.getPrototypeOf(usage) !== Object.prototype)
    return `a malformed "usage" (${describe(usage)})`;
  const fields = usage as Record<string, unknown>;
  for (const key of required)
    if (!isFigure(fields[key], key)) return `a malformed "usage.${key}" (${describe(fields[key])})`;
  for (const key of optional)
    if (fields[key] !== undefined && !isFigure(fields[key], key))
      return `a malformed "usage.${key}" (${describe(fields[key])})`;
  return undefined;
}

function isFigure(value: unknown, key: keyof RunUsage): boolean {
  return typeof value === 'number' && value >= 0 && value < USAGE_BOUNDS[key];
}

function checkHostCall(message: Record<string, unknown>): WorkerMessage | string {
  const { id, name, args } = message;
  if (!Number.isSafeInteger(id)) return 'a host call without a numeric id';
  if (typeof name !== 'string' || name.length > 200) return 'a host call without a function name';
  if (!Array.isArray(args)) return 'a host call without an argument array';
  return message as unknown as WorkerMessage;
}

function isRunId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  if (typeof value === 'number') return String(value);
  return typeof value;
}
