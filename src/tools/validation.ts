import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { createRequire } from 'node:module';
import { coerceAtErrors, valueAt } from './coercion.ts';
import { ConfigErrors, ToolErrors, errorMessage, preview } from '../core/errors.ts';
import { fieldPath } from '../core/field-path.ts';
import { linearRegExp, linearRegExpOrDeferred } from '../core/linear-regexp.ts';
import type { JsonSchema } from '../core/tool-parameters.ts';
import { ToolpoolError } from '../core/error-codes.ts';

const require = createRequire(import.meta.url);

/**
 * Three kinds of Ajv instance for the whole process (one of each per JSON
 * Schema dialect, see dialectOf), alike but for their regular
 * expressions: inline tools (code the host wrote) get JavaScript's own,
 * module tools (code the host may not trust, whose schema still runs on the
 * host) get a linear-time engine. A module tool whose Standard Schema
 * validates again in its worker may have patterns that engine cannot run
 * (Zod's hostname and emoji checks use lookahead): the host leaves those to
 * the worker instead of refusing the tool. Ajv's own `coerceTypes` is off:
 * it rewrote values a union's other branch accepted and made `null` into
 * `""`, `0` or `false`; coercion.ts undoes the usual model mistakes
 * (`"3"` for a number, `"true"` for a boolean) instead, only where the
 * arguments as sent fail. `useDefaults` fills schema defaults; `allErrors` lets one error result
 * name every wrong field at once. Each is made on first use: an executor of
 * module tools alone never needs the inline tools' one.
 */
const argumentAjvs = new Map<string, Ajv>();

/** The JSON Schema dialects toolpool validates with Ajv's class for each; a schema without `$schema` is read as draft-07. */
export type SchemaDialect = 'draft-07' | '2019-09' | '2020-12';

const DIALECTS: Record<string, SchemaDialect> = {
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
};

const META_SCHEMA: Record<SchemaDialect, string> = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2019-09': 'https://json-schema.org/draft/2019-09/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
};

/**
 * The dialect a schema names in `$schema` (with or without the trailing `#`,
 * http or https), draft-07 when it names none, `undefined` when it names
 * one Ajv has no class for (draft-04, a private meta-schema).
 */
export function dialectOf(schema: JsonSchema): SchemaDialect | undefined {
  const named = schema.$schema;
  if (named === undefined) return 'draft-07';
  if (typeof named !== 'string') return undefined;
  const key = named.replace(/#$/, '').replace(/^https?:/, '');
  return Object.entries(DIALECTS).find(([uri]) => uri.replace(/^https?:/, '') === key)?.[1];
}

/**
 * The schema as Ajv is given it, and the dialect to validate it in: as
 * written for a dialect Ajv knows; without its `$schema`, in draft-07, for
 * one it does not (Ajv would refuse the schema, and the tool with it).
 */
export function forAjv(schema: JsonSchema): { schema: JsonSchema; dialect: SchemaDialect } {
  const dialect = dialectOf(schema);
  if (dialect !== undefined && schema.$schema === undefined) return { schema, dialect };
  // The spelling Ajv knows its meta-schema by (http or https, with or without "#", as the dialect's own id has it).
  if (dialect !== undefined) return { schema: { ...schema, $schema: META_SCHEMA[dialect] }, dialect };
  const { $schema: _unknown, ...rest } = schema;
  return { schema: rest as JsonSchema, dialect: 'draft-07' };
}

/** An Ajv instance as toolpool sets them up, of the class for `dialect`; `coerce` for arguments, not for checking what a tool returned. */
export function schemaAjv({
  coerce,
  regExp,
  dialect = 'draft-07',
}: {
  coerce: boolean;
  regExp?: RegExpEngine;
  dialect?: SchemaDialect;
}): Ajv {
  const logger = { log: console.log, warn: warnOnce, error: console.error };
  const options = {
    useDefaults: coerce,
    allErrors: true,
    strict: false,
    logger,
    ...(regExp ? { code: { regExp } } : {}),
  };
  if (dialect === 'draft-07') return new Ajv(options);
  // Loaded on first use (synchronously: compiling is), as ajv-formats is: most executors never meet another dialect,
  // and every worker that imports this file would pay for both classes at start.
  const AjvClass =
    dialect === '2020-12'
      ? (require('ajv/dist/2020') as { Ajv2020: typeof Ajv }).Ajv2020
      : (require('ajv/dist/2019') as { Ajv2019: typeof Ajv }).Ajv2019;
  return new AjvClass(options);
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

export type ValidationOutcome = { ok: true; args: Record<string, unknown> } | { ok: false; message: string };

/**
 * Validates `args`, and coerces them in place where they fail as sent
 * (callers pass an object they own).
 * `received` is what the model sent, untouched, for the error text.
 */
export type ArgumentValidator = (args: Record<string, unknown>, received: unknown) => ValidationOutcome;

/** Where a schema comes from: the host's own code, or a module, whose Standard Schema may validate again in its worker. */
export interface SchemaTrust {
  untrusted?: boolean;
  revalidatedInWorker?: boolean;
  /** `createExecutor({ coerceArguments })`: `false` runs only values of the schema's own types. Default `true`. */
  coerce?: boolean;
}

/** Coercing one value can bring a nested one into view (rarely): a few rounds, then the errors stand. */
const COERCION_ROUNDS = 3;

/**
 * Compiles the validator for one tool, once, at registration. Throws a
 * configuration error naming the tool when the schema itself is broken.
 */
export function compileArgumentValidator(
  toolName: string,
  where: string,
  schema: JsonSchema,
  trust: SchemaTrust = {},
): ArgumentValidator {
  let validate: ValidateFunction;
  try {
    const given = forAjv(schema);
    validate = compileWithFormats(ajvFor(trust, given.dialect), given.schema);
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidSchema(where, errorMessage(error)));
  }
  const coerce = trust.coerce !== false;
  return (args, received) => {
    // Arguments that are valid as sent run as sent: coercion never touches them.
    if (validate(args)) return { ok: true, args };
    for (let round = 0; coerce && round < COERCION_ROUNDS && coerceAtErrors(args, validate.errors ?? []); round++) {
      if (validate(args)) return { ok: true, args };
    }
    const errors = foldUnions(validate.errors ?? []);
    // Only as many problems as the error text shows are described: 200,000 unknown properties stay cheap.
    const problems = errors.slice(0, 20).map((error) => describeProblem(error, schema, args));
    return { ok: false, message: ToolErrors.validationFailed(toolName, problems, received, errors.length) };
  };
}

/** A union's failure is one problem ("must be one of ..."), not one per branch that did not match. */
function foldUnions(errors: ErrorObject[]): ErrorObject[] {
  const unions = errors
    .filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf')
    .map((error) => `${error.schemaPath}/`);
  if (unions.length === 0) return errors;
  return errors.filter((error) => !unions.some((prefix) => error.schemaPath.startsWith(prefix)));
}

function ajvFor({ untrusted, revalidatedInWorker }: SchemaTrust, dialect: SchemaDialect): Ajv {
  const kind = !untrusted ? 'trusted' : revalidatedInWorker ? 'revalidated' : 'untrusted';
  const key = `${kind} ${dialect}`;
  let ajv = argumentAjvs.get(key);
  if (!ajv) {
    const regExp = kind === 'trusted' ? undefined : kind === 'revalidated' ? linearRegExpOrDeferred : linearRegExp;
    ajv = schemaAjv({ coerce: true, dialect, ...(regExp ? { regExp } : {}) });
    argumentAjvs.set(key, ajv);
  }
  return ajv;
}

/** One problem Ajv found, in words: `limit: must be <= 50`, `mode: must be one of "a", "b"`. */
export function describeProblem(error: ErrorObject, schema: JsonSchema, args?: unknown): string {
  const field = fieldOf(error);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type':
      // Arguments: the type in words and what the model sent there; a tool's returned details keep Ajv's words.
      if (args !== undefined)
        return `${field}: must be ${typeWords(params.type)}${sentValue(args, error.instancePath)}`;
      return `${field}: ${error.message ?? 'is invalid'}`;
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

/** `"number"`, `["string", "null"]` → `a number`, `a string or null`. */
function typeWords(type: unknown): string {
  const types = (Array.isArray(type) ? type : [type]).map(String);
  const words = types.map((name) =>
    name === 'null' ? 'null' : name === 'array' || name === 'integer' || name === 'object' ? `an ${name}` : `a ${name}`,
  );
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** What the model sent at a wrong-typed field (a value a type error points at was not coerced): ` (got true)`, ` (got null)`. */
function sentValue(args: unknown, pointer: string): string {
  const found = valueAt(args, pointer);
  if (!found.found) return '';
  const value = found.value;
  if (value === null || typeof value !== 'object') return ` (got ${preview(value, 60)})`;
  return ` (got ${Array.isArray(value) ? 'an array' : 'an object'})`;
}

/** What a union accepts: its values when every branch is a constant or an enum, else the kinds of its branches. */
function unionExpectation(branches: unknown): string {
  if (!Array.isArray(branches)) return 'must match one of the allowed schemas';
  const parts = branches.map((branch: unknown) =>
    typeof branch === 'object' && branch !== null ? (branch as Record<string, unknown>) : {},
  );
  const values = parts.flatMap((branch) =>
    'const' in branch ? [branch.const] : Array.isArray(branch.enum) ? branch.enum : [undefined],
  );
  if (!values.includes(undefined)) return `must be one of ${listValues(values)}`;
  const kinds = parts.map((branch) =>
    'const' in branch ? preview(branch.const, 50) : typeof branch.type === 'string' ? branch.type : 'a schema',
  );
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
