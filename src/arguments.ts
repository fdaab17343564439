/** The arguments of a tool call as the model sent them, made into a fresh object the engine may coerce. */
import { errorMessage } from './errors.ts';

export type Parsed = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Arguments as a JSON string are parsed (some providers send them so); an
 * object is cloned, because coercion rewrites it in place and the caller's
 * object must stay as the model sent it.
 */
export function parseArguments(raw: unknown): Parsed {
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { ok: true, value: {} };
    try {
      return { ok: true, value: JSON.parse(raw) };
    } catch (error) {
      return { ok: false, reason: errorMessage(error) };
    }
  }
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  try {
    return { ok: true, value: cloneArguments(raw) };
  } catch (error) {
    return { ok: false, reason: errorMessage(error) };
  }
}

/** Arguments are JSON-like: copy plain objects and arrays by hand (several times faster than structuredClone for them). */
function cloneArguments(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneArguments);
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = cloneArguments((value as Record<string, unknown>)[key]);
    // A "__proto__" key from JSON is data; assigning it would change the copy's prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
