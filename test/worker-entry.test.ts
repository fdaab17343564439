/**
 * What every worker loads before its first call is most of what a cold
 * start costs: the worker entry must not pull in the host's validators
 * (Ajv, TypeBox's builders). Definitions are read in the worker as plain
 * data and checked on the host (src/core/tool-view.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';

test('the worker entry, bundled as a worker loads it, imports neither Ajv nor TypeBox', async () => {
  const entry = await toRunnableModule(
    fileURLToPath(new URL('../src/isolation/worker/runtime/tool-worker.ts', import.meta.url)),
  );
  const code = readFileSync(entry, 'utf8');
  const imported = [...code.matchAll(/^import .* from ["']([^"']+)["']/gm)].map((match) => match[1]!);
  expect(imported.length).toBeGreaterThan(0);
  expect(imported.filter((specifier) => /ajv|typebox/.test(specifier))).toEqual([]);
  expect(code).not.toMatch(/import\(["'](ajv|@sinclair|typebox)/);
});
