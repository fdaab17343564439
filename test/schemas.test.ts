import { Type as Type034 } from '@sinclair/typebox';
import Type from 'typebox';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { createExecutor as create, defineTool, type ToolParameters } from '../src/index.ts';
import arktypeGreet from './fixtures/schemas/arktype-tool.ts';
import valibotGreet from './fixtures/schemas/valibot-tool.ts';
import zodGreet from './fixtures/schemas/zod-tool.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/**
 * The same greeting tool in each schema library: a transform (upper case), a
 * default (times = 1) and a refinement (tag starts with #). Given as a path
 * it is a module tool (its schema's own validation runs in the worker);
 * imported and given as the object, the same definition is an inline tool.
 */
const inlineGreeters = { zod: zodGreet, valibot: valibotGreet, arktype: arktypeGreet };

const forms = [
  ...(['zod', 'valibot', 'arktype'] as const).map((library) => ({
    library,
    form: 'module',
    tool: fixture(`schemas/${library}-tool.ts`),
  })),
  ...(['zod', 'valibot', 'arktype'] as const).map((library) => ({
    library,
    form: 'inline',
    tool: inlineGreeters[library],
  })),
];

describe.each(forms)('a $library tool ($form)', ({ library, tool }) => {
  const name = `${library}_greet`;

  test("the model sees plain JSON Schema saying its draft (the converter's draft-07), without the library's own keys", async () => {
    const executor = await createExecutor({ tools: [tool] });
    const [definition] = executor.definitions;
    expect(definition!.name).toBe(name);
    expect(definition!.parameters).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 } },
      required: ['name'],
    });
    expect(definition!.parameters.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(definition!.parameters).not.toHaveProperty('~standard');
    expect(JSON.parse(JSON.stringify(definition!.parameters))).toEqual(definition!.parameters);
  });

  test("Ajv coerces on the host, then the schema's own transforms and defaults apply before execute", async () => {
    const executor = await createExecutor({ tools: [tool] });
    const { results } = await executor.executeBatch([
      call('1', name, { name: ' ada ', times: '2' }),
      call('2', name, { name: 'bo', tag: '#x' }),
    ]);
    expect(results.map(textOf)).toEqual(['hi ADAhi ADA', 'hi BO #x']);
    expect(results.map((result) => result.isError)).toEqual([false, false]);
  });

  test('a refinement the JSON Schema cannot express fails as a validation error naming the field; the tool does not run', async () => {
    const executor = await createExecutor({ tools: [tool] });
    const { results } = await executor.executeBatch([call('1', name, { name: 'ada', tag: 'no-hash' })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(new RegExp(`^Validation failed for tool "${name}":\\n  - tag: .*#`));
    expect(textOf(results[0]!)).not.toContain('hi ');
  });

  test("the schema's own validation leaves nothing behind: calls, a failing one too, keep their worker", async () => {
    const executor = await createExecutor({ tools: [tool], workers: { min: 1, max: 1 } });
    const threads: unknown[] = [];
    for (const args of [{ name: 'a' }, { name: 'b', tag: 'no-hash' }, { name: 'c' }]) {
      const { results } = await executor.executeBatch([call('1', name, args)]);
      if (!results[0]!.isError) threads.push((results[0]!.details as { threadId: number }).threadId);
    }
    expect(threads).toHaveLength(2);
    expect(threads[1]).toBe(threads[0]);
  });

  test('an object for a string field is a validation error, not a call', async () => {
    const executor = await createExecutor({ tools: [tool] });
    const { results } = await executor.executeBatch([call('1', name, { name: { a: 1 } })]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toContain(
      `Validation failed for tool "${name}":\n  - name: must be a string (got an object)`,
    );
  });
});

test("in the process tier the schema's own validation runs in the child's worker too", async () => {
  const executor = await createExecutor({ tools: [fixture('schemas/zod-tool.ts')], isolation: 'process' });
  const { results } = await executor.executeBatch([
    call('1', 'zod_greet', { name: ' ada ' }),
    call('2', 'zod_greet', { name: 'a', tag: 'x' }),
  ]);
  expect(textOf(results[0]!)).toBe('hi ADA');
  expect(textOf(results[1]!)).toMatch(/^Validation failed for tool "zod_greet":\n {2}- tag: must start with #/);
});

describe('TypeBox 1.x (the typebox package)', () => {
  const inline = defineTool({
    name: 'typebox1_inline',
    description: 'Greets someone',
    parameters: Type.Object({
      name: Type.String({ minLength: 1 }),
      times: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
    execute: ({ name, times = 1 }) => ({ content: [{ type: 'text', text: `hi ${name}`.repeat(times) }] }),
  });

  test('module and inline tools validate, coerce and run; the model sees its JSON Schema', async () => {
    const executor = await createExecutor({ tools: [fixture('schemas/typebox1-tool.ts'), inline] });
    expect(executor.definitions.map((d) => d.parameters)).toEqual([
      {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1 } },
      },
      {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1 } },
      },
    ]);
    const { results } = await executor.executeBatch([
      call('1', 'typebox1_greet', { name: 'ada', times: '2' }),
      call('2', 'typebox1_inline', { name: 'bo' }),
      call('3', 'typebox1_greet', { name: '' }),
    ]);
    expect(results.slice(0, 2).map(textOf)).toEqual(['hi adahi ada', 'hi bo']);
    expect(results[2]!.isError).toBe(true);
    expect(textOf(results[2]!)).toContain('name: must NOT have fewer than 1 characters');
  });
});

describe('what defineTool refuses', () => {
  const run = () => ({ content: [] });
  const attempt =
    (parameters: unknown, execute: unknown = run) =>
    () =>
      defineTool({
        name: 'refused',
        description: 'x',
        parameters: parameters as ToolParameters,
        execute: execute as never,
      });
  const accepted =
    /It takes a TypeBox schema .* a Standard Schema that gives a JSON Schema \(Zod 4, ArkType 2, Valibot through toStandardJsonSchema\(\) .*\) or a JSON Schema object with type "object"\.$/;

  test.each([
    [
      'a Zod 3 schema',
      z3.object({ a: z3.string() }),
      /^defineTool\("refused"\): "parameters" is a zod Standard Schema without ~standard\.jsonSchema, not a schema toolpool can use\. Zod 3 and early Zod 4 releases give no JSON Schema: use a current Zod 4\. /,
    ],
    [
      'a Valibot schema without its converter',
      v.object({ a: v.string() }),
      /is a valibot Standard Schema without ~standard\.jsonSchema, .* Wrap it in toStandardJsonSchema\(\) from @valibot\/to-json-schema\. /,
    ],
    ['a function', (args: unknown) => args, /"parameters" is a function, not a schema/],
    [
      'the properties without Type.Object',
      { query: Type034.String() },
      /"parameters" is an object of schemas, .* wrap them in Type\.Object/,
    ],
    [
      'an object that is no schema',
      { query: 'string' },
      /"parameters" is an object that is neither a TypeBox schema nor a JSON Schema of type "object"/,
    ],
    ['nothing', undefined, /"parameters" is missing, not a schema/],
  ])('%s, with a message saying what is accepted', (_case, parameters, message) => {
    expect(attempt(parameters)).toThrow(TypeError);
    expect(attempt(parameters)).toThrow(message);
    expect(attempt(parameters)).toThrow(accepted);
  });

  test('a tool without execute', () => {
    expect(attempt(Type034.Object({}), null)).toThrow(
      'defineTool("refused"): "execute" must be a function execute(args, ctx) that runs the tool (it is missing)',
    );
  });
});

describe('what registration refuses', () => {
  test('a module whose default export has no execute', async () => {
    await expect(create({ tools: [fixture('schemas/no-execute.mjs')] })).rejects.toThrow(
      /Tool module .*no-execute\.mjs is invalid: "execute" must be a function execute\(args, ctx\) that runs the tool \(it is missing\)$/,
    );
  });

  test('an inline object that was not made with defineTool is checked the same way', async () => {
    const notASchema = { name: 'raw', description: 'x', parameters: z3.object({}), execute: () => ({ content: [] }) };
    await expect(create({ tools: [notASchema as never] })).rejects.toThrow(
      /Tool inline tool "raw" is invalid: "parameters" is a zod Standard Schema without/,
    );
  });

  test('a Standard Schema that cannot become JSON Schema names its library and why', async () => {
    const dated = {
      name: 'dated',
      description: 'x',
      parameters: z.object({ when: z.date() }),
      execute: () => ({ content: [] }),
    };
    await expect(create({ tools: [dated as never] })).rejects.toThrow(
      'Tool inline tool "dated" has an invalid parameters schema: zod could not turn it into a JSON Schema for the model (Date cannot be represented in JSON Schema)',
    );
  });
});

describe('JSON Schema the converters write', () => {
  test('a $schema of draft-07 or 2020-12 is kept as written and validated in its own dialect', async () => {
    const drafts = ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2020-12/schema'];
    const tools = drafts.map((draft, index) =>
      defineTool({
        name: `drafted_${index}`,
        description: 'x',
        parameters: { $schema: draft, type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        execute: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
      }),
    );
    const executor = await createExecutor({ tools: [...tools, inlineGreeters.zod] });
    expect(executor.definitions.map((d) => d.parameters.$schema)).toEqual([
      ...drafts,
      'http://json-schema.org/draft-07/schema#',
    ]);
    const { results } = await executor.executeBatch([
      call('1', 'drafted_0', { n: '1' }),
      call('2', 'drafted_1', { n: '2' }),
    ]);
    expect(results.map(textOf)).toEqual(['{"n":1}', '{"n":2}']);
  });

  test('a module Zod schema with a lookahead pattern registers: the host runs RE2 and leaves that pattern to the worker', async () => {
    const executor = await createExecutor({ tools: [fixture('schemas/zod-tool.ts')] });
    expect(executor.definitions[0]!.parameters).toMatchObject({ properties: { nick: { pattern: '^(?!admin)\\w+$' } } });
    const { results } = await executor.executeBatch([
      call('1', 'zod_greet', { name: 'a', nick: 'bob' }),
      call('2', 'zod_greet', { name: 'a', nick: 'admin1' }),
    ]);
    expect(textOf(results[0]!)).toBe('hi A');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(/^Validation failed for tool "zod_greet":\n {2}- nick: /);
  });

  test('an async refinement runs before execute too', async () => {
    const taken = new Set(['ada']);
    const signup = defineTool({
      name: 'signup',
      description: 'x',
      parameters: z.object({ user: z.string().refine(async (user) => !taken.has(user), 'is taken') }),
      execute: ({ user }) => ({ content: [{ type: 'text', text: `welcome ${user}` }] }),
    });
    const executor = await createExecutor({ tools: [signup] });
    const { results } = await executor.executeBatch([
      call('1', 'signup', { user: 'ada' }),
      call('2', 'signup', { user: 'bo' }),
    ]);
    expect(textOf(results[0]!)).toBe(
      'Validation failed for tool "signup":\n  - user: is taken\nReceived arguments: {"user":"ada"}',
    );
    expect(textOf(results[1]!)).toBe('welcome bo');
  });
});
