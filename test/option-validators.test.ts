/**
 * The option validators are compiled ahead of time (src/tools/options-schema.ts →
 * src/tools/generated/option-validators.ts): the checked-in file must be what the
 * schemas give today, or an option added to a schema would go unchecked.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { generatedValidators } from '../scripts/option-validators-source.ts';
import { executorProperties } from '../src/tools/options-schema.ts';
import { checkExecutorOptions } from '../src/tools/options-check.ts';

test('src/tools/generated/option-validators.ts is what the schemas compile to (else: npm run generate)', async () => {
  const checkedIn = readFileSync(new URL('../src/tools/generated/option-validators.ts', import.meta.url), 'utf8');
  expect(
    checkedIn === (await generatedValidators()),
    'src/tools/generated/option-validators.ts is stale: run npm run generate',
  ).toBe(true);
});

test("the message for missing tools uses the schema's own words", () => {
  expect(() => checkExecutorOptions({})).toThrow(String(executorProperties.tools.expected));
});
