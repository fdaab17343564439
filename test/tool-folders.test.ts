import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { createExecutor as create } from '../src/index.ts';
import { toolModulesIn } from '../src/tools/tool-folders.ts';
import { call, exampleTool, fixture, textOf, useExecutors } from './support/executors.ts';
import { captureWarnings, restoreWarningsAfterEach } from './support/warnings.ts';

const createExecutor = useExecutors();
const folder = fixture('tool-folder');
const empty = mkdtempSync(join(tmpdir(), 'toolpool-empty-folder-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));
restoreWarningsAfterEach();

describe('a folder in createExecutor({ tools })', () => {
  test('the rule: .ts/.mts/.js/.mjs files, subfolders too, without _ and . names, tests, declarations, lib/ and node_modules/', async () => {
    expect(await toolModulesIn(folder)).toEqual([
      join(folder, 'alpha.ts'),
      join(folder, 'helpers.ts'),
      join(folder, 'sub/beta.mjs'),
    ]);
  });

  test('loads the tools in it; a helper without a tool default export is skipped, said once', async () => {
    const warnings = captureWarnings();
    const executor = await createExecutor({ tools: [folder] });
    expect(executor.definitions.map((d) => d.name)).toEqual(['alpha', 'beta']);
    const { results } = await executor.executeBatch([call('1', 'alpha'), call('2', 'beta')]);
    expect(results.map(textOf)).toEqual(['ALPHA', 'beta']);
    expect(warnings).toEqual([
      `toolpool: skipped 1 module(s) of a tools folder whose default export is not a tool (helpers?): ${join(folder, 'helpers.ts')}. ` +
        'Name helpers with a leading "_" or put them in a lib/ folder to leave them out unread.',
    ]);
  });

  test('as a file URL, and as { module, options } for factories', async () => {
    const executor = await createExecutor({
      tools: [pathToFileURL(join(folder, 'sub')), { module: exampleTool(''), options: { root: folder } }],
    });
    expect(executor.definitions.map((d) => d.name)).toEqual([
      'beta',
      'calculator',
      'flaky',
      'hash',
      'read_file',
      'write_file',
    ]);
    const { results } = await executor.executeBatch([call('1', 'read_file', { path: 'sub/beta.mjs', maxBytes: 30 })]);
    expect(textOf(results[0]!)).toMatch(/^\/\/ A tool in a subfolder/);
  });

  test('a module in a folder that fails to load fails createExecutor, naming it, as a module named on its own does', async () => {
    await expect(create({ tools: [fixture('tool-folder-broken')] })).rejects.toThrow(
      /Tool module .*tool-folder-broken\/throws\.mjs failed to load: the database is not there/,
    );
  });

  test('named on its own, a module without a tool default export is still an error', async () => {
    await expect(create({ tools: [join(folder, 'helpers.ts')] })).rejects.toThrow(
      /helpers\.ts has no default export made with defineTool\(\)/,
    );
  });

  test('a folder with no tool modules is an error that says what the rule loads', async () => {
    await expect(create({ tools: [empty] })).rejects.toThrow(
      `The folder ${empty} has no tool modules: toolpool loads its .ts, .mts, .js and .mjs files`,
    );
  });
});
