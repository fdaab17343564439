import { types } from 'node:util';
import { ToolErrors, boundText } from '../../core/errors.ts';
import { problemWithResult } from '../../core/tool-result.ts';

/**
 * Results and updates cross a structured-clone boundary, and a tool
 * controls every byte of them. In the worker, `copyPayload` reads the value
 * exactly once and builds the copy that is posted: a getter cannot grow the
 * value between the size check and the clone, a 16-byte view of a 100 MiB
 * buffer crosses as 16 bytes, and the size measured is the size of what
 * crosses. On the host, `checkPayload` measures what arrived again, because
 * a worker's own runtime may have been subverted by the tool.
 *
 * Refused: functions, symbols, Proxies, class instances with methods,
 * shared memory (it would keep changing after the result was returned) and
 * nesting deeper than MAX_DEPTH. Size: string characters, binary bytes and
 * 8 bytes for every other value.
 */
export type Copied =
  | { ok: true; value: unknown; bytes: number }
  | { ok: false; error: string; code: 'RESULT_TOO_LARGE' | 'INVALID_RESULT' };

export const MAX_DEPTH = 1_000;

export function copyPayload(value: unknown, what: 'result' | 'update', maxBytes: number): Copied {
  return new PayloadWalk(maxBytes, true).run(value, what);
}

/** The host's re-check of what arrived: the same walk without the copy. Returns the error text or undefined. */
export function checkPayload(value: unknown, what: 'result' | 'update', maxBytes: number): string | undefined {
  const checked = new PayloadWalk(maxBytes, false).run(value, what);
  return checked.ok ? undefined : checked.error;
}

/**
 * Whether a value that arrived whole (a child's frame) stays within
 * `maxBytes` when every shared reference is counted each time it appears:
 * the walk stops at the bound, so it costs no more than the bound, whatever
 * graph the value's few serialized bytes describe.
 */
export function withinExpandedBytes(value: unknown, maxBytes: number): boolean {
  try {
    new PayloadWalk(maxBytes, false).visit(value, 'message', 0);
    return true;
  } catch {
    return false; // too large, or something no honest sender makes (deeper than MAX_DEPTH)
  }
}

const PLAIN_PROTOTYPES = new Set<unknown>([Object.prototype, null, Array.prototype]);
const { keys } = Object;
const { getPrototypeOf, defineProperty } = Object;
const { isArray } = Array;
const arrayBufferSlice = Function.prototype.call.bind(ArrayBuffer.prototype.slice) as (
  buffer: ArrayBuffer,
  start: number,
  end: number,
) => ArrayBuffer;

class TooLarge extends Error {}
class Refused extends Error {}

class PayloadWalk {
  bytes = 0;
  readonly #copies = new Map<object, unknown>();
  /** Bytes each finished object counted, for its later references. */
  readonly #sizes = new Map<object, number>();

  constructor(
    private readonly maxBytes: number,
    private readonly copy: boolean,
  ) {}

  run(value: unknown, what: 'result' | 'update'): Copied {
    let copied: unknown;
    try {
      copied = this.visit(value, what, 0);
    } catch (error) {
      if (error instanceof TooLarge)
        return {
          ok: false,
          error: ToolErrors.resultTooLarge(what, this.bytes, this.maxBytes),
          code: 'RESULT_TOO_LARGE',
        };
      if (error instanceof Refused)
        return { ok: false, error: ToolErrors.notCloneable(what, error.message), code: 'INVALID_RESULT' };
      return {
        ok: false,
        error: ToolErrors.notCloneable(
          what,
          `reading it threw: ${boundText(String((error as Error)?.message ?? error))}`,
        ),
        code: 'INVALID_RESULT',
      };
    }
    const shape = problemWithResult(copied);
    if (shape) return { ok: false, error: ToolErrors.invalidResult(shape), code: 'INVALID_RESULT' };
    return { ok: true, value: copied, bytes: this.bytes };
  }

  #count(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.maxBytes) throw new TooLarge();
  }

  visit(value: unknown, path: string, depth: number): unknown {
    switch (typeof value) {
      case 'string':
        this.#count(value.length + 8);
        return value;
      case 'number':
      case 'boolean':
      case 'bigint':
      case 'undefined':
        this.#count(8);
        return value;
      case 'function':
        throw new Refused(`${boundText(path, 200)} is a function`);
      case 'symbol':
        throw new Refused(`${boundText(path, 200)} is a symbol`);
      default:
        if (value === null) {
          this.#count(8);
          return null;
        }
        return this.#visitObject(value as object, path, depth);
    }
  }

  #visitObject(value: object, path: string, depth: number): unknown {
    if (this.#copies.has(value)) return this.#revisit(value);
    const before = this.bytes;
    const copy = this.#visitNew(value, path, depth);
    this.#sizes.set(value, this.bytes - before);
    return copy;
  }

  /**
   * Cycles and shared references cross as such, but a shared reference is
   * counted each time it appears: whoever reads the result (JSON for the
   * model, a text join) expands it, so 60,000 references to one 500 kB part
   * are 30 GB, not 500 kB. A reference back into its own ancestors (a cycle)
   * costs what a pointer does.
   */
  #revisit(value: object): unknown {
    this.#count(this.#sizes.get(value) ?? 8);
    return this.#copies.get(value);
  }

  #visitNew(value: object, path: string, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new Refused(`it is nested deeper than ${MAX_DEPTH} levels`);
    if (types.isProxy(value)) throw new Refused(`${boundText(path, 200)} is a Proxy`);
    // The common case first: plain objects and arrays, with one prototype lookup.
    const prototype = getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === null) return this.#visitPlain(value, path, depth);
    if (prototype === Array.prototype && isArray(value)) return this.#visitArray(value as unknown[], path, depth);
    return this.#visitSpecial(value, prototype, path, depth);
  }

  #visitSpecial(value: object, prototype: unknown, path: string, depth: number): unknown {
    if (types.isSharedArrayBuffer(value) || (ArrayBuffer.isView(value) && types.isSharedArrayBuffer(value.buffer))) {
      throw new Refused(
        `${boundText(path, 200)} is shared memory (SharedArrayBuffer); copy the bytes into a plain buffer`,
      );
    }
    if (types.isArrayBuffer(value)) return this.#binary(value, value, 0, value.byteLength);
    if (ArrayBuffer.isView(value))
      return this.#binary(value, value.buffer as ArrayBuffer, value.byteOffset, value.byteLength);
    if (types.isDate(value)) return this.#leaf(value, () => new Date(Date.prototype.getTime.call(value)));
    if (types.isRegExp(value) || types.isNativeError(value))
      throw new Refused(`${boundText(path, 200)} is a ${types.isRegExp(value) ? 'RegExp' : 'Error'}; send its text`);
    if (types.isMap(value) || types.isSet(value))
      throw new Refused(`${boundText(path, 200)} is a ${types.isMap(value) ? 'Map' : 'Set'}; send an array or object`);
    if (isArray(value)) return this.#visitArray(value, path, depth);
    if (!PLAIN_PROTOTYPES.has(prototype)) {
      throw new Refused(
        `${boundText(path, 200)} is an instance of ${boundText(String(safeName(prototype)), 100)}, not plain data`,
      );
    }
    return this.#visitPlain(value, path, depth);
  }

  /** The copy is a plain object; a `__proto__` key is defined as data, never assigned. */
  #visitPlain(value: object, path: string, depth: number): unknown {
    const copy: Record<string, unknown> | undefined = this.copy ? {} : undefined;
    this.#copies.set(value, copy);
    for (const key of keys(value)) {
      this.#count(key.length);
      const item = this.visit(
        (value as Record<string, unknown>)[key],
        path.length < 200 ? `${path}.${key}` : path,
        depth + 1,
      );
      if (!copy) continue;
      if (key === '__proto__')
        defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
      else copy[key] = item;
    }
    return copy ?? value;
  }

  #visitArray(value: unknown[], path: string, depth: number): unknown {
    const length = value.length; // read once
    this.#count(8);
    const copy: unknown[] | undefined = this.copy ? new Array(length) : undefined;
    this.#copies.set(value, copy);
    for (let i = 0; i < length; i++) {
      const item = this.visit(value[i], path.length < 200 ? `${path}[${i}]` : path, depth + 1);
      if (copy) copy[i] = item;
    }
    return copy ?? value;
  }

  /** Binary data crosses as a copy of exactly the bytes it shows, so its size is what crosses. */
  #binary(value: object, buffer: ArrayBuffer, offset: number, length: number): unknown {
    this.#count(length + 8);
    if (!this.copy) return value;
    const bytes = arrayBufferSlice(buffer, offset, offset + length);
    const copy = types.isArrayBuffer(value)
      ? bytes
      : types.isDataView(value)
        ? new DataView(bytes)
        : sameTypedArray(value, bytes);
    this.#copies.set(value, copy);
    return copy;
  }

  #leaf(value: object, make: () => unknown): unknown {
    this.#count(16);
    const copy = this.copy ? make() : value;
    this.#copies.set(value, copy);
    return copy;
  }
}

const TYPED_ARRAYS: Record<string, new (buffer: ArrayBuffer) => unknown> = {
  Int8Array,
  Uint8Array,
  Uint8ClampedArray,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
  BigInt64Array,
  BigUint64Array,
};
const typedArrayTag = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)!
  .get!;

function sameTypedArray(view: object, bytes: ArrayBuffer): unknown {
  const make = TYPED_ARRAYS[typedArrayTag.call(view) as string] ?? Uint8Array;
  return new make(bytes);
}

function safeName(prototype: unknown): string {
  try {
    const name = (prototype as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === 'string' ? name : 'an unknown class';
  } catch {
    return 'an unknown class';
  }
}
