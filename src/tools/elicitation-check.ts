import { Ajv } from 'ajv';
import { serialize } from 'node:v8';
import type { ElicitField, ElicitRequest, ElicitResult } from '../core/elicitation.ts';
import { compileWithFormats } from './validation.ts';

/**
 * The bounds of one question: what a tool (perhaps a hostile one, its
 * request relayed from a worker or a child) may ask, and what an answer
 * may hold. A form is for a person: a few fields, short texts.
 */
export const ELICIT_LIMITS = {
  messageChars: 8_000,
  fields: 32,
  /** Names, titles, descriptions and string defaults. */
  textChars: 1_000,
  enumValues: 100,
  /** The whole request and the whole answer, serialized. */
  bytes: 64 * 1024,
} as const;

const STRING_FORMATS = new Set(['email', 'uri', 'date', 'date-time']);
const TOP_KEYS = new Set(['type', 'properties', 'required', '$schema']);
const COMMON_KEYS = ['type', 'title', 'description', 'default'];
const FIELD_KEYS: Record<string, Set<string>> = {
  string: new Set([...COMMON_KEYS, 'minLength', 'maxLength', 'format', 'enum', 'enumNames', 'oneOf']),
  number: new Set([...COMMON_KEYS, 'minimum', 'maximum']),
  integer: new Set([...COMMON_KEYS, 'minimum', 'maximum']),
  boolean: new Set(COMMON_KEYS),
  array: new Set([...COMMON_KEYS, 'minItems', 'maxItems', 'items']),
};

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype;
const isText = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= ELICIT_LIMITS.textChars;
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * Checks a request as it arrived (from inline code, a worker or a child:
 * untrusted) and returns a copy holding only what was checked: a message
 * and a flat object schema of MCP's primitive fields (string, number,
 * integer, boolean, the single- and multi-select enums), defaults
 * included; or what is wrong with it.
 */
export function checkElicitRequest(request: unknown): ElicitRequest | string {
  if (!isPlain(request)) return 'the request is not an object { message, requestedSchema }';
  const { message, requestedSchema: schema } = request;
  if (typeof message !== 'string' || message.length === 0) return '"message" must be a non-empty string';
  if (message.length > ELICIT_LIMITS.messageChars)
    return `"message" has ${message.length} characters, over ${ELICIT_LIMITS.messageChars}`;
  if (bytesOf(request) > ELICIT_LIMITS.bytes) return `the request is over ${ELICIT_LIMITS.bytes} bytes`;
  if (!isPlain(schema) || schema.type !== 'object' || !isPlain(schema.properties))
    return '"requestedSchema" must be { type: "object", properties: { ... } }';
  for (const key of Object.keys(schema))
    if (!TOP_KEYS.has(key))
      return `"requestedSchema" has "${key.slice(0, 40)}"; a form schema has only type, properties and required`;
  const names = Object.keys(schema.properties);
  if (names.length > ELICIT_LIMITS.fields)
    return `"requestedSchema" has ${names.length} fields, over ${ELICIT_LIMITS.fields}`;
  const properties: Record<string, ElicitField> = {};
  for (const name of names) {
    if (!isText(name) || name.length === 0) return 'a field name is empty or too long';
    const field = checkField(schema.properties[name]);
    if (typeof field === 'string') return `field "${name}": ${field}`;
    // A field named "__proto__" is a field: defined, never assigned (which would set the object's prototype).
    Object.defineProperty(properties, name, { value: field, enumerable: true, writable: true, configurable: true });
  }
  const checked: ElicitRequest = { message, requestedSchema: { type: 'object', properties } };
  if (schema.required !== undefined) {
    const { required } = schema;
    if (
      !Array.isArray(required) ||
      !required.every((name) => typeof name === 'string' && Object.hasOwn(properties, name))
    )
      return '"required" must list names of the form\'s fields';
    checked.requestedSchema.required = [...new Set(required as string[])];
  }
  return checked;
}

function checkField(field: unknown): ElicitField | string {
  if (!isPlain(field)) return 'not a schema object';
  const allowed =
    typeof field.type === 'string' && Object.hasOwn(FIELD_KEYS, field.type) ? FIELD_KEYS[field.type] : undefined;
  if (!allowed) return 'its type must be "string", "number", "integer", "boolean" or "array" (a multi-select)';
  for (const key of Object.keys(field))
    if (!allowed.has(key)) return `"${key.slice(0, 40)}" is not allowed on a ${field.type} field`;
  if (field.title !== undefined && !isText(field.title)) return '"title" must be a short string';
  if (field.description !== undefined && !isText(field.description)) return '"description" must be a short string';
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems'])
    if (field[key] !== undefined && !isCount(field[key])) return `"${key}" must be a non-negative integer`;
  for (const key of ['minimum', 'maximum'])
    if (field[key] !== undefined && !Number.isFinite(field[key])) return `"${key}" must be a finite number`;
  if (field.format !== undefined && !STRING_FORMATS.has(field.format as string))
    return '"format" must be email, uri, date or date-time';
  const values = enumValues(field);
  if (typeof values === 'string') return values;
  if (field.type === 'array' && values === undefined)
    return 'a multi-select needs items { type: "string", enum } or { anyOf: [{ const, title }] }';
  if (field.default !== undefined) {
    const problem = defaultProblem(field, values);
    if (problem) return problem;
  }
  return structuredClone(field) as ElicitField;
}

/** The values an enum field may take (single or multi-select), undefined for a field that is no enum, or what is wrong. */
function enumValues(field: Record<string, unknown>): string[] | undefined | string {
  if (field.type === 'string') {
    if (field.enum !== undefined && field.oneOf !== undefined) return 'use "enum" or "oneOf", not both';
    if (field.enum !== undefined) {
      const values = stringList(field.enum, 'enum');
      if (typeof values === 'string') return values;
      if (field.enumNames !== undefined) {
        const titles = stringList(field.enumNames, 'enumNames');
        if (typeof titles === 'string') return titles;
        if (titles.length !== values.length) return '"enumNames" must have one title per "enum" value';
      }
      return values;
    }
    if (field.enumNames !== undefined) return '"enumNames" goes with "enum"';
    if (field.oneOf !== undefined) return titledValues(field.oneOf, 'oneOf');
    return undefined;
  }
  if (field.type !== 'array') return undefined;
  const { items } = field;
  if (!isPlain(items)) return undefined;
  const keys = Object.keys(items).sort().join(',');
  if (keys === 'enum,type' && items.type === 'string') return stringList(items.enum, 'items.enum');
  if (keys === 'anyOf') return titledValues(items.anyOf, 'items.anyOf');
  return '"items" must be { type: "string", enum } or { anyOf: [{ const, title }] }';
}

function stringList(list: unknown, name: string): string[] | string {
  if (!Array.isArray(list) || list.length === 0 || list.length > ELICIT_LIMITS.enumValues || !list.every(isText))
    return `"${name}" must be 1 to ${ELICIT_LIMITS.enumValues} short strings`;
  return list as string[];
}

function titledValues(list: unknown, name: string): string[] | string {
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.length > ELICIT_LIMITS.enumValues ||
    !list.every(
      (option) =>
        isPlain(option) &&
        isText(option.const) &&
        isText(option.title) &&
        Object.keys(option).every((key) => key === 'const' || key === 'title'),
    )
  )
    return `"${name}" must be 1 to ${ELICIT_LIMITS.enumValues} options { const, title } (short strings)`;
  return (list as { const: string }[]).map((option) => option.const);
}

function defaultProblem(field: Record<string, unknown>, values: string[] | undefined): string | undefined {
  const value = field.default;
  const ok =
    field.type === 'boolean'
      ? typeof value === 'boolean'
      : field.type === 'number'
        ? Number.isFinite(value)
        : field.type === 'integer'
          ? Number.isSafeInteger(value)
          : field.type === 'string'
            ? isText(value) && (values === undefined || values.includes(value))
            : Array.isArray(value) && value.every((item) => typeof item === 'string' && values!.includes(item));
  return ok ? undefined : '"default" is not a value of the field';
}

let ajv: Ajv | undefined;

/**
 * Checks an answer (a handler's, a client's) against the request it
 * answers: an action of accept, decline or cancel; with accept, content
 * that the requested schema accepts (Ajv, formats included; no field the
 * form did not ask for). Returns a fresh copy of what was checked, or what
 * is wrong with it.
 */
export function checkElicitAnswer(answer: unknown, request: ElicitRequest): ElicitResult | string {
  if (!isPlain(answer)) return 'the answer is not an object { action, content? }';
  const { action, content } = answer;
  if (action === 'decline' || action === 'cancel') return { action };
  if (action !== 'accept')
    return `the answer's action is ${JSON.stringify(String(action).slice(0, 40))}, not accept, decline or cancel`;
  const given = content ?? {};
  if (!isPlain(given)) return 'the accepted content is not an object';
  if (bytesOf(given) > ELICIT_LIMITS.bytes) return `the accepted content is over ${ELICIT_LIMITS.bytes} bytes`;
  ajv ??= new Ajv({ strict: false, allErrors: false, logger: false });
  const schema = { ...request.requestedSchema, additionalProperties: false };
  delete (schema as Record<string, unknown>).$schema;
  const validate = compileWithFormats(ajv, schema);
  // Ajv keeps every schema it compiled, keyed by the object: each question's goes once it has been used.
  ajv.removeSchema(schema);
  const copy = structuredClone(given);
  if (validate(copy)) return { action: 'accept', content: copy as ElicitResult['content'] & object };
  const error = validate.errors?.[0];
  return `the accepted content does not fit the form: ${error?.instancePath || '(content)'} ${error?.message ?? 'is invalid'}`;
}

/**
 * SEP-1034: the defaults of the requested schema, for the fields an
 * accepted answer left out (what an MCP client applies before it answers).
 */
export function withElicitDefaults(
  schema: { properties?: Record<string, { default?: unknown }> } | undefined,
  content: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const filled: Record<string, unknown> = { ...content };
  for (const [name, field] of Object.entries(schema?.properties ?? {}))
    if (!Object.hasOwn(filled, name) && isPlain(field) && field.default !== undefined)
      // Defined, never assigned: a field named "__proto__" would set the object's prototype.
      Object.defineProperty(filled, name, {
        value: structuredClone(field.default),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return filled;
}

function bytesOf(value: unknown): number {
  try {
    return serialize(value).byteLength;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
