import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { compileModule } from '../src/isolation/worker/module-compiler.ts';

// executor.metadata's moduleHash: what a module is (its source and the files
// of its own it imports), not where it is.

const folders: string[] = [];
afterAll(() => Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))));

/** A module tree in a folder of its own: file name → source. */
async function tree(files: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'toolpool-hash-'));
  folders.push(folder);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(folder, name, '..'), { recursive: true });
    await writeFile(join(folder, name), text);
  }
  return folder;
}

const hashOf = async (files: Record<string, string>, entry = 'tool.ts') =>
  (await compileModule(join(await tree(files), entry))).contentHash;

const base = {
  'tool.ts': "import a from './lib/a.ts';\nimport b from './lib/b.ts';\nexport default { a, b };\n",
  'lib/a.ts': 'export default 1;\n',
  'lib/b.ts': 'export default 2;\n',
};

describe('module content hash', () => {
  test('the same files at another path hash the same; TypeScript and JavaScript alike', async () => {
    expect(await hashOf(base)).toMatch(/^[0-9a-f]{32}$/);
    expect(await hashOf(base)).toBe(await hashOf(base));
    const js = { 'tool.mjs': "import { a } from './a.mjs';\nexport default a;\n", 'a.mjs': 'export const a = 1;\n' };
    expect(await hashOf(js, 'tool.mjs')).toBe(await hashOf(js, 'tool.mjs'));
  });

  test('a change in a file it imports changes it, and so does swapping what two imports lead to', async () => {
    const before = await hashOf(base);
    expect(await hashOf({ ...base, 'lib/b.ts': 'export default 3;\n' })).not.toBe(before);
    expect(await hashOf({ ...base, 'lib/a.ts': base['lib/b.ts'], 'lib/b.ts': base['lib/a.ts'] })).not.toBe(before);
    expect(await hashOf({ ...base, 'tool.ts': `${base['tool.ts']}// a comment\n` })).not.toBe(before);
  });

  test('a file next to it that it does not import is not part of it', async () => {
    expect(await hashOf({ ...base, 'notes.ts': 'export const unrelated = true;\n' })).toBe(await hashOf(base));
  });
});
