import { describe, expect, test } from 'vitest';
import { seeded } from '../bench/lib/seeded.ts';
import { coerceValue } from '../src/tools/coercion.ts';
import { defineTool } from '../src/index.ts';
import typeboxTypes from './fixtures/coercion/typebox-types.ts';
import unionShapesTool, { argumentHash, unionShapes } from './fixtures/coercion/union-shapes.ts';
import { call, fixture, textOf, useExecutors, useSharedExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
/** One executor per tool form and coercion setting: each test is one call on it. */
const sharedExecutor = useSharedExecutors();

/**
 * Coercion forgives the model's common mistakes and invents nothing
 * (DESIGN: `coerceArguments`): numeric strings to numbers and integers,
 * "true"/"false" to booleans, finite numbers to strings; never null to
 * anything, never a boolean to a number or a number to a boolean.
 */
describe('the coercion rules', () => {
  test.each([
    ['3', ['number'], 3],
    ['-2.5e1', ['number'], -25],
    ['7', ['integer'], 7],
    ['true', ['boolean'], true],
    ['false', ['boolean'], false],
    [42, ['string'], '42'],
    ['3', ['boolean', 'integer'], 3],
  ])('%j to %j is %j', (value, types, expected) => {
    expect(coerceValue(value, types)).toBe(expected);
  });

  test.each([
    [null, ['number', 'integer', 'boolean', 'string', 'array', 'object']],
    [true, ['number', 'integer', 'string', 'null']],
    [false, ['number', 'integer', 'string', 'null']],
    [0, ['boolean', 'null']],
    [1, ['boolean', 'array']],
    ['', ['number', 'integer', 'boolean', 'null']],
    [' 3', ['number']],
    ['0x10', ['number']],
    ['Infinity', ['number']],
    ['NaN', ['number']],
    ['7.5', ['integer']],
    ['1e400', ['number']],
    ['TRUE', ['boolean']],
    ['yes', ['boolean']],
    ['1', ['boolean']],
    [Number.NaN, ['string']],
    [{}, ['string']],
  ])('%j is never made into any of %j', (value, types) => {
    expect(typeof coerceValue(value, types)).toBe('symbol');
  });
});

const forms = [
  { form: 'TypeBox module (worker)', name: 'tb_types', tool: fixture('coercion/typebox-types.ts') as unknown },
  { form: 'TypeBox inline (host)', name: 'tb_types', tool: typeboxTypes as unknown },
  { form: 'Zod module (worker)', name: 'zod_types', tool: fixture('coercion/zod-types.ts') as unknown },
];

describe.each(forms)('arguments of a $form tool', ({ form, name, tool }) => {
  async function run(args: Record<string, unknown>, { coerceArguments = true }: { coerceArguments?: boolean } = {}) {
    const executor = await sharedExecutor(`${form} ${coerceArguments}`, { tools: [tool as string], coerceArguments });
    const { results } = await executor.executeBatch([call('1', name, args)]);
    return results[0]!;
  }

  test.each([
    [{ n: '3' }, { n: 3 }],
    [{ n: '2.5' }, { n: 2.5 }],
    [{ i: '7' }, { i: 7 }],
    [{ b: 'true' }, { b: true }],
    [{ b: 'false' }, { b: false }],
    [{ s: 42 }, { s: '42' }],
    [{ s: 1.5 }, { s: '1.5' }],
    [{ list: [{ count: '2' }, { count: 3 }] }, { list: [{ count: 2 }, { count: 3 }] }],
  ])('the common mistake %j runs as %j', async (args, expected) => {
    const result = await run(args);
    expect(textOf(result)).toBe(JSON.stringify(expected));
    expect(result.isError).toBe(false);
  });

  test.each([
    [{ n: null }, 'n: must be a number (got null)'],
    [{ s: null }, 's: must be a string (got null)'],
    [{ b: null }, 'b: must be a boolean (got null)'],
    [{ n: true }, 'n: must be a number (got true)'],
    [{ i: false }, 'i: must be an integer (got false)'],
    [{ b: 1 }, 'b: must be a boolean (got 1)'],
    [{ b: 0 }, 'b: must be a boolean (got 0)'],
    [{ s: true }, 's: must be a string (got true)'],
    [{ n: '' }, 'n: must be a number (got "")'],
    [{ n: 'three' }, 'n: must be a number (got "three")'],
    [{ i: '7.5' }, 'i: must be an integer (got "7.5")'],
    [{ b: 'yes' }, 'b: must be a boolean (got "yes")'],
    [{ s: { a: 1 } }, 's: must be a string (got an object)'],
    [{ list: [{ count: null }] }, 'list[0].count: must be an integer (got null)'],
  ])('%j is refused, naming the field, the type it needs and what was sent', async (args, problem) => {
    const result = await run(args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `Validation failed for tool "${name}":\n  - ${problem}\nReceived arguments: ${JSON.stringify(args)}`,
    );
  });

  test('a boolean for a bounded number is a wrong type, not a number out of bounds', async () => {
    const result = await run({ atLeast5: true });
    expect(textOf(result)).toContain('atLeast5: must be a number (got true)');
    expect(textOf(result)).not.toContain('>= 5');
  });

  test('when a check fails after coercion, the error shows what the model sent, not the coerced value', async () => {
    const result = await run({ atLeast5: '3', n: '4' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('atLeast5: must be >= 5');
    expect(textOf(result)).toContain('Received arguments: {"atLeast5":"3","n":"4"}');
  });

  test("coerceArguments: false runs only values of the schema's own types", async () => {
    const refused = await run({ n: '3', b: 'true', s: 42 }, { coerceArguments: false });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('n: must be a number (got "3")');
    expect(textOf(refused)).toContain('b: must be a boolean (got "true")');
    expect(textOf(refused)).toContain('s: must be a string (got 42)');
    const valid = await run({ n: 3, b: true, s: '42' }, { coerceArguments: false });
    expect(textOf(valid)).toBe('{"n":3,"b":true,"s":"42"}');
  });
});

test('coerceArguments must be a boolean', async () => {
  await expect(createExecutor({ tools: [typeboxTypes], coerceArguments: 'no' as never })).rejects.toThrow(
    /coerceArguments.*true or false/,
  );
});

type Schema = Record<string, unknown>;

/** Strings a careless coercion would take for numbers or booleans, and some it would not. */
const STRINGS = ['3', '0', '-1', '2.5', '1e3', 'true', 'false', '', 'x', ' 7', 'null', '007'];
const NUMBERS = [0, 1, -1, 3, 2.5, -0.125, 1e21, 42];

/** A value valid for `schema` (the subset of JSON Schema the fixtures use), drawn with `next`. */
function validValue(schema: Schema, next: () => number): unknown {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return pick(schema.enum);
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) return validValue(pick(branches), next);
  const type = Array.isArray(schema.type) ? pick(schema.type as string[]) : (schema.type as string);
  switch (type) {
    case 'string':
      return pick(STRINGS);
    case 'number':
      return pick(NUMBERS);
    case 'integer':
      return pick(NUMBERS.filter(Number.isSafeInteger));
    case 'boolean':
      return next() < 0.5;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: Math.floor(next() * 5) }, () => validValue(schema.items as Schema, next));
    case 'object': {
      const required = (schema.required as string[] | undefined) ?? [];
      const value: Record<string, unknown> = {};
      for (const [key, property] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
        if (required.includes(key) || next() < 0.7) value[key] = validValue(property, next);
      }
      return value;
    }
    default:
      throw new Error(`the generator knows no type ${String(type)}`);
  }
}

/** The Zod fixture's schema as JSON Schema, its keys in the Zod object's order (Zod's output follows it). */
const zodUnions: Schema = {
  type: 'object',
  properties: {
    stringOrNumber: unionShapes.properties.stringOrNumber,
    integerOrBoolean: unionShapes.properties.integerOrBoolean,
    nullable: unionShapes.properties.nullable,
    list: unionShapes.properties.list,
    nested: { type: 'object', properties: { either: unionShapes.properties.nested.properties.deep.properties.either } },
  },
};

const SEEDS = [1, 2, 3, 20261205];
const CALLS_PER_SEED = 40;

describe.each([
  {
    form: 'a JSON Schema module tool (hash taken in the worker)',
    tool: fixture('coercion/union-shapes.ts') as unknown,
    name: 'union_shapes',
    schema: unionShapes as Schema,
  },
  {
    form: 'a JSON Schema inline tool (hash taken on the host)',
    tool: unionShapesTool as unknown,
    name: 'union_shapes',
    schema: unionShapes as Schema,
  },
  {
    form: "a Zod module tool (hash taken in the worker, after Zod's own validation)",
    tool: fixture('coercion/zod-unions.ts') as unknown,
    name: 'zod_unions',
    schema: zodUnions,
  },
])('valid arguments arrive intact: $form', ({ form, tool, name, schema }) => {
  test.each(SEEDS)('seed %i: every valid value reaches execute unchanged', async (seed) => {
    const next = seeded(seed);
    const sent = Array.from({ length: CALLS_PER_SEED }, () => validValue(schema, next) as Record<string, unknown>);
    const executor = await sharedExecutor(form, { tools: [tool as string] });
    const { results } = await executor.executeBatch(sent.map((args, index) => call(String(index), name, args)));
    const changed = results.flatMap((result, index) =>
      textOf(result) === argumentHash(sent[index]) ? [] : [{ sent: sent[index], got: textOf(result) }],
    );
    expect(changed).toEqual([]);
  });
});

test("the generator draws values the union fields' other branches would take, so the test can fail", () => {
  const next = seeded(SEEDS[0]!);
  const drawn = Array.from({ length: CALLS_PER_SEED }, () =>
    JSON.stringify(validValue(unionShapes as Schema, next)),
  ).join('\n');
  expect(drawn).toMatch(/"stringOrNumber":"(3|0|-1|2\.5|1e3)"/);
  expect(drawn).toMatch(/"integerOrBoolean":"(true|false|3|0)"/);
});

test('a defineTool with an inline union: a numeric string stays a string where a string branch takes it', async () => {
  const tool = defineTool({
    name: 'u',
    description: 'u',
    parameters: {
      type: 'object',
      properties: { v: { anyOf: [{ type: 'number' }, { type: 'string' }] }, w: { type: 'number' } },
    },
    execute: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
  });
  const executor = await createExecutor({ tools: [tool] });
  // w needs coercion, so the first validation fails: v must still not be touched.
  const { results } = await executor.executeBatch([call('1', 'u', { v: '3', w: '4' })]);
  expect(textOf(results[0]!)).toBe('{"v":"3","w":4}');
});
