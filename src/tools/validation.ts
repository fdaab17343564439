import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { createRequire } from 'node:module';
import { ConfigErrors, ToolErrors, errorMessage, preview } from '../core/errors.ts';
import { fieldPath } from '../core/field-path.ts';
import { linearRegExp, linearRegExpOrDeferred } from '../core/linear-regexp.ts';
import type { JsonSchema } from '../core/tool-parameters.ts';
import { ToolpoolError } from '../core/error-codes.ts';

const require = createRequire(import.meta.url);

/**
 * Three Ajv instances for the whole process, alike but for their regular
 * expressions: inline tools (code the host wrote) get JavaScript's own,
 * module tools (code the host may not trust, whose schema still runs on the
 * host) get a linear-time engine. A module tool whose Standard Schema
 * validates again in its worker may have patterns that engine cannot run
 * (Zod's hostname and emoji checks use lookahead): the host leaves those to
 * the worker instead of refusing the tool. `coerceTypes` undoes the usual
 * model mistakes (`"3"` for a number, `"true"` for a boolean) in place;
 * `useDefaults` fills schema defaults; `allErrors` lets one error result
 * name every wrong field at once. Each is made on first use: an executor of
 * module tools alone never needs the inline tools' one.
 */
let trustedAjv: Ajv | undefined;
let untrustedAjv: Ajv | undefined;
let revalidatedAjv: Ajv | undefined;

/** An Ajv instance as toolpool sets them up; `coerce` for arguments, not for checking what a tool returned. */
export function schemaAjv({ coerce, regExp }: { coerce: boolean; regExp?: RegExpEngine }): Ajv {
  const logger = { log: console.log, warn: warnOnce, error: console.error };
  return new Ajv({ coerceTypes: coerce, useDefaults: coerce, allErrors: true, strict: false, logger, ...(regExp ? { code: { regExp } } : {}) });
}

const withFormats = new WeakSet<Ajv>();

/**
 * `email`, `uri`, `date-time`, `uuid`, … are checked, not only shown to the
 * model. ajv-formats is loaded (synchronously: compiling is) and added to an
 * instance only when a schema uses `format`: most tools' schemas do not, and
 * loading it took ~25 ms of every executor's start.
 */
export function compileWithFormats(ajv: Ajv, schema: JsonSchema): ValidateFunction {
  if (!withFormats.has(ajv) && usesFormat(schema)) {
    // ajv-formats is CommonJS: its module.exports' `default` is the plugin.
    (require('ajv-formats') as { default: (ajv: Ajv) => Ajv }).default(ajv);
    withFormats.add(ajv);
  }
  return ajv.compile(schema);
}

/** Whether a `format` keyword appears anywhere in the schema, at any depth (a property named "format" counts too: harmless). */
function usesFormat(schema: JsonSchema): boolean {
  return JSON.stringify(schema).includes('"format":"');
}

const warned = new Set<string>();

/** Ajv repeats a warning (an unknown format) each time it meets it; say it once per process. */
function warnOnce(...parts: unknown[]): void {
  const text = parts.map(String).join(' ');
  if (warned.has(text)) return;
  warned.add(text);
  console.warn(ConfigErrors.schemaWarning(text));
}

export type ValidationOutcome =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; message: string };

/**
 * Validates and coerces `args` in place (callers pass an object they own).
 * `received` is what the model sent, untouched, for the error text.
 */
export type ArgumentValidator = (args: Record<string, unknown>, received: unknown) => ValidationOutcome;

/** Where a schema comes from: the host's own code, or a module, whose Standard Schema may validate again in its worker. */
export interface SchemaTrust {
  untrusted?: boolean;
  revalidatedInWorker?: boolean;
}

/**
 * Compiles the validator for one tool, once, at registration. Throws a
 * configuration error naming the tool when the schema itself is broken.
 */
export function compileArgumentValidator(toolName: string, where: string, schema: JsonSchema, trust: SchemaTrust = {}): ArgumentValidator {
  let validate: ValidateFunction;
  try {
    validate = compileWithFormats(ajvFor(trust), schema);
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidSchema(where, errorMessage(error)));
  }
  return (args, received) => {
    if (validate(args)) return { ok: true, args };
    const errors = foldUnions(validate.errors ?? []);
    // Only as many problems as the error text shows are described: 200,000 unknown properties stay cheap.
    const problems = errors.slice(0, 20).map((error) => describeProblem(error, schema));
    return { ok: false, message: ToolErrors.validationFailed(toolName, problems, received, errors.length) };
  };
}

/** A union's failure is one problem ("must be one of ..."), not one per branch that did not match. */
function foldUnions(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf').map((error) => `${error.schemaPath}/`);
  if (unions.length === 0) return errors;
  return errors.filter((error) => !unions.some((prefix) => error.schemaPath.startsWith(prefix)));
}

function ajvFor({ untrusted, revalidatedInWorker }: SchemaTrust): Ajv {
  if (!untrusted) return (trustedAjv ??= schemaAjv({ coerce: true }));
  if (revalidatedInWorker) return (revalidatedAjv ??= schemaAjv({ coerce: true, regExp: linearRegExpOrDeferred }));
  return (untrustedAjv ??= schemaAjv({ coerce: true, regExp: linearRegExp }));
}

/** One problem Ajv found, in words: `limit: must be <= 50`, `mode: must be one of "a", "b"`. */
export function describeProblem(error: ErrorObject, schema: JsonSchema): string {
  const field = fieldOf(error);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${field}: is required but missing`;
    case 'additionalProperties':
      return `${field}: is not an allowed property`;
    case 'enum':
      return `${field}: must be one of ${listValues(params.allowedValues as unknown[])}`;
    case 'const':
      return `${field}: must be ${preview(params.allowedValue, 100)}`;
    case 'anyOf':
    case 'oneOf':
      return `${field}: ${unionExpectation(schemaAt(schema, error.schemaPath))}`;
    default:
      return `${field}: ${error.message ?? 'is invalid'}`;
  }
}

/** What a union accepts: its values when every branch is a constant or an enum, else the kinds of its branches. */
function unionExpectation(branches: unknown): string {
  if (!Array.isArray(branches)) return 'must match one of the allowed schemas';
  const parts = branches.map((branch: unknown) => (typeof branch === 'object' && branch !== null ? (branch as Record<string, unknown>) : {}));
  const values = parts.flatMap((branch) => ('const' in branch ? [branch.const] : Array.isArray(branch.enum) ? branch.enum : [undefined]));
  if (!values.includes(undefined)) return `must be one of ${listValues(values)}`;
  const kinds = parts.map((branch) => ('const' in branch ? preview(branch.const, 50) : typeof branch.type === 'string' ? branch.type : 'a schema'));
  return `must be one of: ${[...new Set(kinds)].join(', ')}`;
}

function listValues(values: unknown[]): string {
  const shown = values.slice(0, 30).map((value) => preview(value, 50));
  return values.length > shown.length ? `${shown.join(', ')} … (${values.length} values)` : shown.join(', ');
}

/** The part of the tool's schema an error's `schemaPath` (`#/properties/mode/anyOf`) points at. */
function schemaAt(schema: JsonSchema, pointer: string): unknown {
  let node: unknown = schema;
  for (const segment of pointer.split('/').slice(1).map(unescapePointer)) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/** A readable field path: `limit`, `filters.tags[2]`, or `(root)`. */
function fieldOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const segments = error.instancePath.split('/').slice(1).map(unescapePointer);
  if (error.keyword === 'required') segments.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(params.additionalProperty));
  return fieldPath(segments);
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
