/** The arguments of a tool call as the model sent them, made into a fresh object the engine may coerce. */
import { errorMessage } from '../core/errors.ts';

export type Parsed = { ok: true; value: unknown } | { ok: false; reason: string; tooDeep?: true };

/**
 * How deeply arguments may nest. Tool schemas nest at most 64 levels; a
 * value under a field that takes anything (`Type.Unknown()`) could go on
 * for hundreds of thousands, which the structured clone to a worker cannot
 * take (the call would never start). Refused here, with a text that says so.
 */
export const MAX_ARGUMENT_DEPTH = 1_000;

class TooDeep extends Error {}

/**
 * Arguments as a JSON string are parsed (some providers send them so); an
 * object is cloned, because coercion rewrites it in place and the caller's
 * object must stay as the model sent it.
 */
export function parseArguments(raw: unknown): Parsed {
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { ok: true, value: {} };
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
    return nestsDeeperThan(value, MAX_ARGUMENT_DEPTH) ? tooDeep() : { ok: true, value };
  }
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  try {
    return { ok: true, value: cloneArguments(raw, 0) };
  } catch (error) {
    return error instanceof TooDeep ? tooDeep() : { ok: false, reason: errorMessage(error) };
  }
}

function tooDeep(): Parsed {
  return { ok: false, reason: `they nest deeper than ${MAX_ARGUMENT_DEPTH} levels`, tooDeep: true };
}

/** Iterative, so no depth overflows this thread's stack; most arguments are a level or two and cost next to nothing. */
function nestsDeeperThan(root: unknown, limit: number): boolean {
  if (typeof root !== 'object' || root === null) return false;
  const stack: unknown[] = [root];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const value = stack.pop() as object;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    for (const child of Object.values(value)) {
      if (typeof child !== 'object' || child === null) continue;
      stack.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** Arguments are JSON-like: copy plain objects and arrays by hand (several times faster than structuredClone for them). */
function cloneArguments(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_ARGUMENT_DEPTH) throw new TooDeep();
  if (Array.isArray(value)) return value.map((item) => cloneArguments(item, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = cloneArguments((value as Record<string, unknown>)[key], depth + 1);
    // A "__proto__" key from JSON is data; assigning it would change the copy's prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
