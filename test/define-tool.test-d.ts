// biome-ignore-all format: each @ts-expect-error marks the one line after it, which the formatter would split.
import { Type, type Static } from '@sinclair/typebox';
import { describe, expectTypeOf, test } from 'vitest';
import { defineTool, type ToolContext, type ToolResult } from '../src/index.ts';

// S1: the type of `args` comes from the same TypeBox schema the model sees.
describe('defineTool types', () => {
  test('execute receives Static<typeof parameters>', () => {
    const parameters = Type.Object({
      query: Type.String({ minLength: 1 }),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
      mode: Type.Union([Type.Literal('fast'), Type.Literal('exact')]),
    });
    defineTool({
      name: 'search_docs',
      description: 'Search the documentation',
      parameters,
      execute(args, ctx) {
        expectTypeOf(args).toEqualTypeOf<Static<typeof parameters>>();
        expectTypeOf(args).toEqualTypeOf<{ query: string; limit?: number; mode: 'fast' | 'exact' }>();
        expectTypeOf(ctx).toEqualTypeOf<ToolContext>();
        return { content: [] };
      },
    });
  });

  test('annotations are typed hints; outputSchema takes a TypeBox or JSON Schema object schema', () => {
    const base = { name: 'hinted', description: 'x', parameters: Type.Object({}), execute: () => ({ content: [] }) };
    defineTool({ ...base, annotations: { title: 'Hinted', readOnlyHint: true, openWorldHint: false } });
    defineTool({ ...base, outputSchema: Type.Object({ n: Type.Number() }) });
    defineTool({ ...base, outputSchema: { type: 'object', properties: { n: { type: 'number' } } } });
    // @ts-expect-error a hint is a boolean
    defineTool({ ...base, annotations: { readOnlyHint: 'yes' } });
    // @ts-expect-error not an MCP tool hint
    defineTool({ ...base, annotations: { color: 'red' } });
    // @ts-expect-error a JSON Schema object schema says type: 'object'
    defineTool({ ...base, outputSchema: { type: 'array' } });
  });

  test('a wrong argument type or a wrong result shape does not compile', () => {
    defineTool({
      name: 'typed',
      description: 'typed',
      parameters: Type.Object({ n: Type.Number() }),
      // @ts-expect-error n is a number, so string methods do not exist on it
      execute: (args) => ({ content: [{ type: 'text', text: args.n.toUpperCase() }] }),
    });
    defineTool({
      name: 'typed',
      description: 'typed',
      parameters: Type.Object({}),
      // @ts-expect-error content parts need a known type
      execute: () => ({ content: [{ type: 'video', url: 'x' }] }),
    });
    expectTypeOf<ToolResult['content'][number]['type']>().toEqualTypeOf<'text' | 'image' | 'audio' | 'resource' | 'resource_link'>();
  });

  test('details keep their type through defineTool', () => {
    const tool = defineTool({
      name: 'd',
      description: 'd',
      parameters: Type.Object({}),
      execute: () => ({ content: [], details: { hits: 3 } }),
    });
    expectTypeOf(tool.execute).returns.toEqualTypeOf<ToolResult<{ hits: number }> | Promise<ToolResult<{ hits: number }>>>();
  });
  test('needsApproval gets the same typed args as execute, and must answer a boolean', () => {
    const parameters = Type.Object({ amount: Type.Number(), to: Type.String() });
    defineTool({
      name: 'pay',
      description: 'pay',
      parameters,
      needsApproval: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ amount: number; to: string }>();
        return args.amount > 100;
      },
      execute: () => ({ content: [] }),
    });
    defineTool({ name: 'pay', description: 'pay', parameters, needsApproval: async () => true, execute: () => ({ content: [] }) });
    defineTool({ name: 'pay', description: 'pay', parameters, needsApproval: true, execute: () => ({ content: [] }) });
    // @ts-expect-error an answer must be a boolean
    defineTool({ name: 'pay', description: 'pay', parameters, needsApproval: () => 'yes', execute: () => ({ content: [] }) });
    // @ts-expect-error args.amount is a number
    defineTool({ name: 'pay', description: 'pay', parameters, needsApproval: (args) => args.amount.startsWith('1'), execute: () => ({ content: [] }) });
  });
});
