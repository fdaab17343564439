// biome-ignore-all format: each @ts-expect-error marks the one line after it, which the formatter would split.
import { Type as Type034 } from '@sinclair/typebox';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import Type from 'typebox';
import * as v from 'valibot';
import { describe, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { defineTool, type ToolSchema } from '../src/index.ts';

const result = { content: [] };

// execute's args come from the schema's OUTPUT type; needsApproval sees the JSON-Schema-validated INPUT.
describe('args typed from each schema library', () => {
  test('Zod 4: transforms and defaults give the output type', () => {
    defineTool({
      name: 'z',
      description: 'z',
      parameters: z.object({ name: z.string().transform((s) => s.length), times: z.number().default(1), tag: z.string().optional() }),
      needsApproval: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ name: string; times?: number | undefined; tag?: string | undefined }>();
        return false;
      },
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ name: number; times: number; tag?: string | undefined }>();
        return result;
      },
    });
  });

  test('Valibot through toStandardJsonSchema', () => {
    defineTool({
      name: 'v',
      description: 'v',
      parameters: toStandardJsonSchema(v.object({ name: v.pipe(v.string(), v.transform((s) => s.length)), times: v.optional(v.number(), 1) })),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ name: number; times: number }>();
        return result;
      },
    });
  });

  test('ArkType 2', () => {
    defineTool({
      name: 'a',
      description: 'a',
      parameters: type({ name: type('string').pipe((s) => s.length), 'times?': 'number' }),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ name: number; times?: number }>();
        return result;
      },
    });
  });

  test('TypeBox 1.x and 0.34: Static', () => {
    defineTool({
      name: 't1',
      description: 't1',
      parameters: Type.Object({ name: Type.String(), times: Type.Optional(Type.Integer()), mode: Type.Union([Type.Literal('a'), Type.Literal('b')]) }),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ name: string; times?: number; mode: 'a' | 'b' }>();
        return result;
      },
    });
    defineTool({
      name: 't0',
      description: 't0',
      parameters: Type034.Object({ name: Type034.String() }),
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<{ name: string }>();
        return result;
      },
    });
  });

  test('a JSON Schema written out gives untyped args', () => {
    defineTool({
      name: 'j',
      description: 'j',
      parameters: { type: 'object', properties: { n: { type: 'number' } } },
      execute(args) {
        expectTypeOf(args).toEqualTypeOf<Record<string, unknown>>();
        return result;
      },
    });
  });

  test('what is not a schema toolpool understands does not compile', () => {
    // @ts-expect-error a Zod 3 schema has no ~standard.jsonSchema
    defineTool({ name: 'x', description: 'x', parameters: z3.object({ a: z3.string() }), execute: () => result });
    // @ts-expect-error a Valibot schema needs toStandardJsonSchema
    defineTool({ name: 'x', description: 'x', parameters: v.object({ a: v.string() }), execute: () => result });
    // @ts-expect-error the properties alone are not a schema
    defineTool({ name: 'x', description: 'x', parameters: { a: Type034.String() }, execute: () => result });
    // @ts-expect-error execute is required
    defineTool({ name: 'x', description: 'x', parameters: z.object({}) });
  });

  test('definitions carry plain JSON Schema', () => {
    expectTypeOf<ToolSchema['parameters']>().toEqualTypeOf<Record<string, unknown>>();
  });
});
