/**
 * Schemas as written: a tool's `$schema` is kept and its schema validated by
 * Ajv's class for that dialect; TypeBox tuples are emitted in 2020-12 form so
 * a client reading 2020-12 accepts them; module patterns each test their own
 * expression (Ajv keys compiled patterns by the engine's toString()).
 */
import { Type } from '@sinclair/typebox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import { createMcpServer } from '../src/adapters/mcp/index.ts';
import { defineTool } from '../src/index.ts';
import { compileArgumentValidator, dialectOf } from '../src/tools/validation.ts';
import { call, textOf, useExecutors } from './support/executors.ts';

const D2020 = 'https://json-schema.org/draft/2020-12/schema';

const echoArgs = { execute: (args: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(args) }] }) };

/** The conformance suite's json_schema_2020_12_tool (SEP-1613). */
const conformanceTool = defineTool({
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  parameters: {
    $schema: D2020,
    type: 'object',
    $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
    properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
    additionalProperties: false,
  },
  ...echoArgs,
});

const pair = defineTool({
  name: 'pair',
  description: 'A TypeBox tuple',
  parameters: Type.Object({ at: Type.Tuple([Type.Number(), Type.String()]) }),
  ...echoArgs,
});

describe('dialects', () => {
  const open = useExecutors();

  test('dialectOf reads $schema in either spelling; draft-07 without one; undefined for one Ajv has no class for', () => {
    expect(dialectOf({ type: 'object' })).toBe('draft-07');
    expect(dialectOf({ $schema: 'http://json-schema.org/draft-07/schema#' })).toBe('draft-07');
    expect(dialectOf({ $schema: `${D2020}#` })).toBe('2020-12');
    expect(dialectOf({ $schema: 'http://json-schema.org/draft/2020-12/schema' })).toBe('2020-12');
    expect(dialectOf({ $schema: 'https://json-schema.org/draft/2019-09/schema' })).toBe('2019-09');
    expect(dialectOf({ $schema: 'http://json-schema.org/draft-04/schema#' })).toBeUndefined();
  });

  test('a 2020-12 tuple (prefixItems) is enforced on the host, not ignored as an unknown keyword', async () => {
    const tool = defineTool({
      name: 'point',
      description: 'x',
      parameters: {
        $schema: D2020,
        type: 'object',
        properties: { at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }], items: false } },
        required: ['at'],
      },
      ...echoArgs,
    });
    const executor = await open({ tools: [tool] });
    expect(executor.definitions[0]!.parameters.$schema).toBe(D2020);
    const { results } = await executor.executeBatch([
      call('ok', 'point', { at: [1, 'a'] }),
      call('bad', 'point', { at: [{}, 'a'] }),
      call('long', 'point', { at: [1, 'a', 3] }),
    ]);
    expect(results.map((result) => result.isError)).toEqual([false, true, true]);
    expect(textOf(results[1]!)).toMatch(/at\[0\]: must be a number/);
  });

  test('a 2019-09 keyword (dependentRequired) is enforced', async () => {
    const tool = defineTool({
      name: 'card',
      description: 'x',
      parameters: {
        $schema: 'https://json-schema.org/draft/2019-09/schema',
        type: 'object',
        properties: { card: { type: 'string' }, cvc: { type: 'string' } },
        dependentRequired: { card: ['cvc'] },
      },
      ...echoArgs,
    });
    const executor = await open({ tools: [tool] });
    const { results } = await executor.executeBatch([
      call('ok', 'card', { card: '1', cvc: '2' }),
      call('bad', 'card', { card: '1' }),
    ]);
    expect(results.map((result) => result.isError)).toEqual([false, true]);
  });

  test('a $schema Ajv has no class for (draft-04) still registers: it is validated as draft-07 and served as written', async () => {
    const tool = defineTool({
      name: 'old',
      description: 'x',
      parameters: {
        $schema: 'http://json-schema.org/draft-04/schema#',
        type: 'object',
        properties: { n: { type: 'number' } },
        required: ['n'],
      },
      ...echoArgs,
    });
    const executor = await open({ tools: [tool] });
    expect(executor.definitions[0]!.parameters.$schema).toBe('http://json-schema.org/draft-04/schema#');
    const { results } = await executor.executeBatch([call('ok', 'old', { n: '3' }), call('bad', 'old', {})]);
    expect(results.map((result) => result.isError)).toEqual([false, true]);
  });

  test('an outputSchema in 2020-12 checks details in that dialect', async () => {
    const tool = defineTool({
      name: 'out',
      description: 'x',
      parameters: Type.Object({ good: Type.Boolean() }),
      outputSchema: {
        $schema: D2020,
        type: 'object',
        properties: { at: { type: 'array', prefixItems: [{ type: 'number' }], items: false } },
      } as never,
      execute: ({ good }) => ({ content: [], details: { at: good ? [1] : ['x'] } }),
    });
    const executor = await open({ tools: [tool] });
    const { results } = await executor.executeBatch([
      call('ok', 'out', { good: true }),
      call('bad', 'out', { good: false }),
    ]);
    expect(results.map((result) => result.isError)).toEqual([false, true]);
  });

  test('TypeBox tuples are emitted as 2020-12 (prefixItems) and marked so; the host still enforces them', async () => {
    const executor = await open({ tools: [pair] });
    const { parameters } = executor.definitions[0]!;
    expect(parameters.$schema).toBe(D2020);
    expect(parameters).toMatchObject({
      properties: { at: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'string' }] } },
    });
    expect(JSON.stringify(parameters)).not.toContain('additionalItems');
    const { results } = await executor.executeBatch([
      call('ok', 'pair', { at: [1, 'a'] }),
      call('bad', 'pair', { at: ['x', 'a'] }),
      call('long', 'pair', { at: [1, 'a', 2] }),
    ]);
    expect(results.map((result) => result.isError)).toEqual([false, true, true]);
  });

  test('TypeBox without tuples is left as TypeBox writes it (it reads the same in draft-07 and 2020-12)', async () => {
    const executor = await open({
      tools: [
        defineTool({ name: 'plain', description: 'x', parameters: Type.Object({ n: Type.Number() }), ...echoArgs }),
      ],
    });
    expect(executor.definitions[0]!.parameters).not.toHaveProperty('$schema');
  });
});

describe('served over MCP, read by a 2020-12 client', () => {
  const open = useExecutors();

  test('the conformance tool keeps $schema, $defs and additionalProperties; every served inputSchema is a valid 2020-12 schema', async () => {
    const executor = await open({ tools: [conformanceTool, pair] });
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    const conformance = tools.find((tool) => tool.name === 'json_schema_2020_12_tool')!;
    expect(conformance.inputSchema).toMatchObject({
      $schema: D2020,
      $defs: { address: expect.any(Object) },
      additionalProperties: false,
    });
    // A client that reads every schema as 2020-12 (the 2025-11-25 default) and checks it against the meta-schema.
    const reader = new Ajv2020({ strict: false });
    for (const tool of tools)
      expect([tool.name, reader.validateSchema(tool.inputSchema), reader.errorsText()]).toEqual([
        tool.name,
        true,
        'No errors',
      ]);
    expect(
      await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { name: 'a', extra: 1 } }),
    ).toMatchObject({ isError: true });
    await server.close();
  });
});

describe('module patterns on the host (linear-time engine)', () => {
  test('each pattern tests its own expression: a second pattern is not the first one again', () => {
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } },
    };
    for (const dialect of [undefined, D2020]) {
      const validate = compileArgumentValidator(
        't',
        'w',
        { ...schema, ...(dialect ? { $schema: dialect } : {}) } as never,
        { untrusted: true },
      );
      expect(validate({ a: 'aa', b: 'bb' }, {}).ok).toBe(true);
      expect(validate({ a: 'aa', b: 'aa' }, {}).ok).toBe(false);
    }
  });
});
