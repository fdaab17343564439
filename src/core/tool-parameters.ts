import type { Static, TSchema } from '@sinclair/typebox';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { ConfigErrors } from './errors.ts';
import type { TypeBoxStatic } from './typebox-static.js';

/**
 * What `defineTool({ parameters })` accepts, and what toolpool makes of it:
 * the JSON Schema the model sees and Ajv checks, the TypeScript type of
 * `execute`'s arguments, and the schema's own validation (a Standard
 * Schema's refinements, transforms and defaults), which runs before
 * `execute` wherever the tool's code runs.
 */

/** A JSON Schema as plain data: what the model is shown and what Ajv compiles. */
export type JsonSchema = Record<string, unknown>;

/** A TypeBox 1.x schema (the `typebox` package), known by its kind. */
export interface TypeBoxSchema {
  readonly '~kind': string;
}

/** A JSON Schema written out as an object; the arguments are not typed from it. */
export interface JsonObjectSchema {
  readonly type: 'object';
  readonly [keyword: string]: unknown;
}

/**
 * A schema toolpool understands: TypeBox (`@sinclair/typebox` 0.32-0.34, or
 * `typebox` 1.x), a Standard Schema that can give a JSON Schema (Zod 4,
 * ArkType 2, Valibot through `toStandardJsonSchema`), or a JSON Schema
 * object of `type: 'object'`.
 */
export type ToolParameters = TSchema | TypeBoxSchema | StandardJSONSchemaV1 | JsonObjectSchema;

/** The type of `execute`'s arguments: a Standard Schema's output type, TypeBox's `Static`. */
export type ToolArgs<P> = P extends StandardJSONSchemaV1
  ? StandardJSONSchemaV1.InferOutput<P>
  : P extends TSchema
    ? Static<P>
    : P extends TypeBoxSchema
      ? TypeBoxStatic<P>
      : Record<string, unknown>;

/**
 * The arguments as the JSON Schema validated them, before a Standard
 * Schema's own validation (its transforms) ran: what `needsApproval` sees.
 * For TypeBox and JSON Schema the same as `ToolArgs`.
 */
export type ToolInput<P> = P extends StandardJSONSchemaV1 ? StandardJSONSchemaV1.InferInput<P> : ToolArgs<P>;

const TYPEBOX_KIND = Symbol.for('TypeBox.Kind');

/** Says why `value` is not a schema toolpool can use, or `undefined` when it is one. */
export function parametersProblem(value: unknown): string | undefined {
  const standard = standardProps(value);
  if (standard) {
    if (typeof (standard.jsonSchema as { input?: unknown } | undefined)?.input === 'function') return undefined;
    return ConfigErrors.notASchema(
      `a ${vendorOf(standard)} Standard Schema without ~standard.jsonSchema`,
      noJsonSchemaHint(vendorOf(standard)),
    );
  }
  if (typeof value === 'function') return ConfigErrors.notASchema('a function', '');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return ConfigErrors.notASchema(describeValue(value), '');
  if (isTypeBox(value) || (value as { type?: unknown }).type === 'object') return undefined;
  if (Object.values(value).length > 0 && Object.values(value).every(isTypeBox)) {
    return ConfigErrors.notASchema(
      'an object of schemas',
      'It looks like the properties alone: wrap them in Type.Object({ ... }).',
    );
  }
  return ConfigErrors.notASchema('an object that is neither a TypeBox schema nor a JSON Schema of type "object"', '');
}

/**
 * The JSON Schema of a schema `parametersProblem` accepted, as plain data
 * (TypeBox's symbol and hidden keys dropped), in the dialect it says it is:
 * a JSON Schema keeps its `$schema` as written; a Standard Schema's
 * converter writes draft-07 and says so in `$schema`; TypeBox writes
 * neither, and its output reads the same in draft-07 and 2020-12 (the MCP
 * default when `$schema` is absent) but for tuples, which are written in
 * 2020-12's form (`prefixItems`) and marked 2020-12. The host validates each
 * in its own dialect (see validation.ts). Throws when a Standard Schema
 * cannot be converted (a Zod transform).
 */
export function jsonSchemaOf(parameters: ToolParameters): JsonSchema {
  const standard = standardProps(parameters) as StandardJSONSchemaV1.Props | undefined;
  const source = standard
    ? standard.jsonSchema.input({ target: 'draft-07', ...converterOptions(standard.vendor) })
    : parameters;
  const plain = JSON.parse(JSON.stringify(source)) as JsonSchema;
  if (!standard && isTypeBox(parameters) && plain.$schema === undefined && tuplesTo2020(plain)) {
    return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...plain };
  }
  return plain;
}

/**
 * Rewrites draft-07 tuples (`items: [...]`, `additionalItems`) into 2020-12's
 * `prefixItems` and `items`, in place, at any depth; says whether it found any.
 */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

function tuplesTo2020(node: unknown): boolean {
  if (typeof node !== 'object' || node === null) return false;
  if (Array.isArray(node)) return node.map(tuplesTo2020).some(Boolean);
  const schema = node as Record<string, unknown>;
  let found = false;
  for (const [key, value] of Object.entries(schema)) if (!DATA_KEYWORDS.has(key) && tuplesTo2020(value)) found = true;
  if (Array.isArray(schema.items)) {
    schema.prefixItems = schema.items;
    delete schema.items;
    if ('additionalItems' in schema) {
      schema.items = schema.additionalItems;
      delete schema.additionalItems;
    }
    found = true;
  }
  return found;
}

/**
 * What a library's converter needs to leave its refinements to the library:
 * Valibot's throws on a `check` or `transform` it cannot express unless told
 * to ignore them (Zod's and ArkType's leave refinements out by themselves).
 * They still apply: the schema's own validation runs before `execute`.
 */
function converterOptions(vendor: string): Pick<StandardJSONSchemaV1.Options, 'libraryOptions'> {
  return vendor === 'valibot' ? { libraryOptions: { errorMode: 'ignore' } } : {};
}

/** The library behind a Standard Schema (`zod`, `arktype`, `valibot`), or `undefined` for TypeBox and JSON Schema. */
export function schemaVendor(parameters: unknown): string | undefined {
  const standard = standardProps(parameters);
  return standard && typeof standard.validate === 'function' ? vendorOf(standard) : undefined;
}

/** A Standard Schema's properties when it has its own `validate`; `undefined` for TypeBox and JSON Schema. */
export function ownValidation(parameters: unknown): StandardSchemaV1.Props | undefined {
  const standard = standardProps(parameters);
  return typeof standard?.validate === 'function' ? (standard as StandardSchemaV1.Props) : undefined;
}

function standardProps(value: unknown): Partial<StandardSchemaV1.Props & StandardJSONSchemaV1.Props> | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const props = (value as { '~standard'?: unknown })['~standard'];
  return typeof props === 'object' && props !== null ? props : undefined;
}

function isTypeBox(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (TYPEBOX_KIND in value || typeof (value as { '~kind'?: unknown })['~kind'] === 'string')
  );
}

function vendorOf(standard: { vendor?: unknown }): string {
  return typeof standard.vendor === 'string' ? standard.vendor.slice(0, 40) : 'unnamed';
}

/** What to do about a Standard Schema that gives no JSON Schema, for the libraries whose answer is known. */
function noJsonSchemaHint(vendor: string): string {
  if (vendor === 'zod') return 'Zod 3 and early Zod 4 releases give no JSON Schema: use a current Zod 4.';
  if (vendor === 'valibot') return 'Wrap it in toStandardJsonSchema() from @valibot/to-json-schema.';
  return '';
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'undefined' ? 'missing' : `a ${typeof value}`;
}
