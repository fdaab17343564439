import { types } from 'node:util';
import { ToolErrors } from '../errors.ts';
import { problemWithResult } from '../tool-result.ts';

/**
 * Checks, on the sending side, that a result or an update is plain data
 * that can cross to the host, and measures it against `maxResultBytes`
 * before anything is sent. Returns the error text, or `undefined` when the
 * value may be posted as it is.
 *
 * Why a walk and not `v8.serialize`: serializing every reply costs about as
 * much as the rest of a round trip, while this walk costs well under a
 * microsecond for a typical result. It is also stricter than structured
 * clone, on purpose: a function, a symbol, a promise or a class instance
 * with methods is refused with a message instead of being silently mangled,
 * and whatever it accepts is certain to clone, so a reply can never fail in
 * postMessage (which would leave its call hanging).
 *
 * Size: string characters, binary bytes and 8 bytes for every other value;
 * close to the serialized size and never far below it.
 */
export function problemWithPayload(value: unknown, what: 'result' | 'update', maxBytes: number): string | undefined {
  const shape = problemWithResult(value);
  if (shape) return ToolErrors.invalidResult(shape);
  const walk = new PayloadWalk(maxBytes);
  const problem = walk.visit(value, what);
  if (problem) return ToolErrors.notCloneable(what, problem);
  if (walk.bytes > maxBytes) return ToolErrors.resultTooLarge(what, walk.bytes, maxBytes);
  return undefined;
}

const PLAIN_PROTOTYPES = new Set<unknown>([Object.prototype, null, Array.prototype]);

class PayloadWalk {
  bytes = 0;
  readonly #seen = new Set<object>();

  constructor(private readonly maxBytes: number) {}

  /** Returns what makes `value` unsendable (with its path), or undefined. */
  visit(value: unknown, path: string): string | undefined {
    switch (typeof value) {
      case 'string':
        this.bytes += value.length + 8;
        return undefined;
      case 'number':
      case 'boolean':
      case 'bigint':
      case 'undefined':
        this.bytes += 8;
        return undefined;
      case 'function':
        return `${path} is a function`;
      case 'symbol':
        return `${path} is a symbol`;
      default:
        return value === null ? ((this.bytes += 8), undefined) : this.#visitObject(value as object, path);
    }
  }

  #visitObject(value: object, path: string): string | undefined {
    if (this.#seen.has(value)) return undefined; // structured clone keeps cycles and shared references
    this.#seen.add(value);
    if (types.isProxy(value)) return `${path} is a Proxy`;
    if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
      this.bytes += value.byteLength;
      return undefined;
    }
    if (value instanceof Date || value instanceof RegExp || value instanceof Error) {
      this.bytes += 32;
      return undefined;
    }
    if (value instanceof Map) return this.#visitEntries([...value.entries()].flat(), `${path}(Map)`);
    if (value instanceof Set) return this.#visitEntries([...value.values()], `${path}(Set)`);
    const prototype = Object.getPrototypeOf(value);
    if (!PLAIN_PROTOTYPES.has(prototype)) {
      const name = (prototype?.constructor as { name?: string } | undefined)?.name ?? 'an unknown class';
      return `${path} is an instance of ${name}, not plain data`;
    }
    for (const key of Object.keys(value)) {
      const problem = this.visit((value as Record<string, unknown>)[key], `${path}.${key}`);
      if (problem) return problem;
      this.bytes += key.length;
      if (this.bytes > this.maxBytes) return undefined; // already too large; the caller reports the size
    }
    return undefined;
  }

  #visitEntries(values: unknown[], path: string): string | undefined {
    for (const entry of values) {
      const problem = this.visit(entry, path);
      if (problem) return problem;
    }
    return undefined;
  }
}
