/**
 * Examples the README quotes (between the region markers), type-checked
 * with the rest of the code and run by test/readme-examples.test.ts, so the
 * docs cannot drift from the API. Not part of the build.
 */
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { type } from 'arktype';
import * as v from 'valibot';
import { z } from 'zod';
import { defineTool, type Tool } from '../index.ts';

/** The same kind of tool written with Zod, Valibot and ArkType. */
export function schemaExamples(): Tool[] {
  // #region zod
  const weather = defineTool({
    name: 'weather',
    description: 'The weather in a city',
    parameters: z.object({
      city: z.string().min(1).transform((city) => city.trim()), // runs before execute
      unit: z.enum(['celsius', 'fahrenheit']).default('celsius'),
    }),
    execute: ({ city, unit }) => ({ content: [{ type: 'text', text: `${city}: 21 degrees ${unit}` }] }),
  });
  // #endregion

  // #region valibot-arktype
  const valibotWeather = defineTool({
    name: 'weather_v',
    description: 'The weather in a city',
    parameters: toStandardJsonSchema(v.object({ city: v.pipe(v.string(), v.minLength(1)) })), // Valibot needs its converter
    execute: ({ city }) => ({ content: [{ type: 'text', text: `${city}: sunny` }] }),
  });
  const arkWeather = defineTool({
    name: 'weather_a',
    description: 'The weather in a city',
    parameters: type({ city: 'string > 0', 'days?': '1 <= number.integer <= 7' }),
    execute: ({ city, days = 1 }) => ({ content: [{ type: 'text', text: `${city}: sunny for ${days} day(s)` }] }),
  });
  // #endregion
  return [weather, valibotWeather, arkWeather];
}
