/**
 * ajv-formats is loaded only for a schema that uses `format`: the check for
 * one must see it at any depth, or a deep format would go unchecked. A file
 * of its own, so no earlier schema has loaded the formats already.
 */
import { expect, test } from 'vitest';
import { compileArgumentValidator } from '../src/tools/validation.ts';

test('a format 300 levels deep in the first schema compiled is checked', () => {
  let schema: Record<string, unknown> = { type: 'string', format: 'email' };
  let good: unknown = 'a@example.com';
  let bad: unknown = 'not an email';
  for (let i = 0; i < 300; i++) {
    schema = { type: 'object', properties: { a: schema }, required: ['a'] };
    good = { a: good };
    bad = { a: bad };
  }
  const validate = compileArgumentValidator('deep', 'inline tool "deep"', schema);
  expect(validate(good as Record<string, unknown>, good).ok).toBe(true);
  const outcome = validate(bad as Record<string, unknown>, bad);
  expect(outcome.ok).toBe(false);
  expect(outcome.ok ? '' : outcome.message).toMatch(/^Validation failed for tool "deep"/); // the field's path is cut short, not the check
});
