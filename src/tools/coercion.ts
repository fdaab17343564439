import type { ErrorObject } from 'ajv';

/**
 * The model's common mistakes, undone, and nothing more: a numeric string
 * where a number or an integer belongs (`"3"`), `"true"`/`"false"` where a
 * boolean belongs, a finite number where a string belongs. `null` never
 * becomes anything, nothing becomes `null`, a boolean never becomes a
 * number nor a number a boolean, and a value is never wrapped in an array.
 *
 * It runs only after the arguments failed validation as they were sent, and
 * only at the places Ajv named with a `type` error: a value some branch of
 * a union already accepts raises no error there and is left as it is (Ajv's
 * own `coerceTypes` rewrote such values while trying the branches in turn).
 */

/** A JSON number written plainly: no spaces, no hex, no `Infinity`, not empty. */
const NUMERIC = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

const NO_VALUE: unique symbol = Symbol('no value');

/** The value the model sent, made into one of `types` by the rules above; `NO_VALUE` when none applies. */
export function coerceValue(value: unknown, types: readonly string[]): unknown {
  for (const type of types) {
    switch (type) {
      case 'number':
      case 'integer': {
        if (typeof value !== 'string' || !NUMERIC.test(value)) break;
        const number = Number(value);
        if (!Number.isFinite(number) || (type === 'integer' && !Number.isInteger(number))) break;
        return number;
      }
      case 'boolean':
        if (value === 'true') return true;
        if (value === 'false') return false;
        break;
      case 'string':
        if (typeof value === 'number' && Number.isFinite(value)) return String(value);
        break;
    }
  }
  return NO_VALUE;
}

/**
 * Rewrites in place (in the caller's own copy of the arguments) each value
 * a `type` error points at that the rules can make into a type it needs.
 * Where a union's branches need different types, the first branch's type
 * that applies wins. Returns whether anything changed.
 */
export function coerceAtErrors(args: Record<string, unknown>, errors: readonly ErrorObject[]): boolean {
  const wanted = new Map<string, string[]>();
  for (const error of errors) {
    if (error.keyword !== 'type' || error.instancePath === '') continue;
    const types = Array.isArray(error.params.type) ? (error.params.type as string[]) : [String(error.params.type)];
    const list = wanted.get(error.instancePath) ?? [];
    for (const type of types) if (!list.includes(type)) list.push(type);
    wanted.set(error.instancePath, list);
  }
  let changed = false;
  for (const [pointer, types] of wanted) {
    const place = locate(args, pointer);
    if (!place) continue;
    const coerced = coerceValue(place.parent[place.key], types);
    if (coerced === NO_VALUE) continue;
    // An own property named "__proto__" is data: assigning it would change the object's prototype.
    Object.defineProperty(place.parent, place.key, {
      value: coerced,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    changed = true;
  }
  return changed;
}

/** The value at a JSON pointer (`/filters/tags/2`), from own properties only; `undefined` when the path is not there. */
export function valueAt(root: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  const place = locate(root, pointer);
  return place ? { found: true, value: place.parent[place.key] } : { found: false };
}

function locate(root: unknown, pointer: string): { parent: Record<string, unknown>; key: string } | undefined {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: unknown = root;
  for (let index = 0; index < segments.length; index++) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, segments[index]!)) return undefined;
    if (index === segments.length - 1) return { parent: node as Record<string, unknown>, key: segments[index]! };
    node = (node as Record<string, unknown>)[segments[index]!];
  }
  return undefined;
}
