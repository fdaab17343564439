/**
 * Compiles the option schemas of src/tools/options-schema.ts into
 * src/tools/generated/option-validators.ts with Ajv's standalone code, so that no
 * executor builds or compiles them at run time. Run it (`npm run generate`)
 * after changing a schema; test/option-validators.test.ts fails while the
 * file is not what this writes.
 *
 * `node --import tsx scripts/generate-option-validators.ts [--check]`:
 * with --check it writes nothing and exits 1 when the file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedValidators } from './option-validators-source.ts';

const target = fileURLToPath(new URL('../src/tools/generated/option-validators.ts', import.meta.url));
const code = await generatedValidators();

if (process.argv.includes('--check')) {
  const current = readFileSync(target, 'utf8');
  if (current !== code) {
    console.error('src/tools/generated/option-validators.ts is stale: run npm run generate');
    process.exit(1);
  }
} else {
  writeFileSync(target, code);
  console.log(`wrote ${target} (${code.length} characters)`);
}
