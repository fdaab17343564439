import { pathToFileURL } from 'node:url';
import { mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { createExecutor as create, defineTool } from '../src/index.ts';
import { call, exampleTool, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

describe('loading tools', () => {
  test('TypeScript and JavaScript modules, paths and file URLs, and inline tools together', async () => {
    const inline = defineTool({
      name: 'inline',
      description: 'i',
      parameters: Type.Object({}),
      execute: () => ({ content: [{ type: 'text', text: 'inline ok' }] }),
    });
    const executor = await createExecutor({
      tools: [exampleTool('calculator.ts'), pathToFileURL(fixture('plain-js-tool.mjs')), inline],
    });
    expect(executor.definitions.map((d) => d.name)).toEqual(['calculator', 'plain_js', 'inline']);
    expect(executor.definitions[0]!.parameters).toMatchObject({ type: 'object', required: ['expression'] });
    const { results } = await executor.executeBatch([
      call('1', 'calculator', { expression: '1 + 2 * 3' }),
      call('2', 'plain_js', { a: '2', b: 3 }),
      call('3', 'inline'),
    ]);
    expect(results.map(textOf)).toEqual(['1 + 2 * 3 = 7', '5', 'inline ok']);
  });

  test('a module whose default export is a factory gets its options', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolpool-read-'));
    await writeFile(join(root, 'note.txt'), 'hello from the root');
    const executor = await createExecutor({ tools: [{ module: exampleTool('read-file.ts'), options: { root } }] });
    const { results } = await executor.executeBatch([
      call('1', 'read_file', { path: 'note.txt' }),
      call('2', 'read_file', { path: '../outside.txt' }),
    ]);
    expect(textOf(results[0]!)).toBe('hello from the root');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(/outside the workspace root/);
  });
  test('write_file writes only inside its root, follows no symlink out of it, and needs approval for every call', async () => {
    const root = await mkdtemp(join(tmpdir(), 'toolpool-write-'));
    const outside = await mkdtemp(join(tmpdir(), 'toolpool-outside-'));
    await symlink(outside, join(root, 'escape'));
    const executor = await createExecutor({ tools: [{ module: exampleTool('write-file.ts'), options: { root } }] });
    const calls = [
      call('1', 'write_file', { path: 'notes/a.txt', text: 'hello' }),
      call('2', 'write_file', { path: '../x.txt', text: 'no' }),
      call('3', 'write_file', { path: 'escape/y.txt', text: 'no' }),
    ];
    const unapproved = await executor.executeBatch(calls);
    expect(unapproved.results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(textOf(unapproved.results[0]!)).toMatch(/"write_file" needs a person's approval/);

    const { results } = await executor.executeBatch(calls, { approvals: { approved: ['1', '2', '3'] } });
    expect(textOf(results[0]!)).toBe('Wrote 5 bytes to notes/a.txt.');
    expect(await readFile(join(root, 'notes/a.txt'), 'utf8')).toBe('hello');
    expect(results.slice(1).map((r) => [r.isError, /outside the workspace root/.test(textOf(r))])).toEqual([
      [true, true],
      [true, true],
    ]);
    expect(await readdir(outside)).toEqual([]);
  });
});

describe('bad tool modules make createExecutor reject with a clear message', () => {
  test.each([
    ['a module that does not exist', fixture('nope.ts'), /Tool module .*nope\.ts could not be found/],
    ['no default export', fixture('no-default.ts'), /no-default\.ts has no default export made with defineTool\(\)/],
    [
      'an invalid schema',
      fixture('bad-schema.ts'),
      /bad-schema\.ts has an invalid parameters schema: .*properties\/n\/type must be equal to one of the allowed values/,
    ],
    [
      'a module that throws on import',
      fixture('throws-on-load.mjs'),
      /throws-on-load\.mjs failed to load: cannot initialise/,
    ],
    [
      'a syntax error, with its file, line and column',
      fixture('syntax-error.mjs'),
      /syntax-error\.mjs failed to load: .*Unexpected identifier 'is'.* \(syntax error at .*syntax-error\.mjs:3:8\)$/,
    ],
  ])('%s', async (_case, module, message) => {
    await expect(create({ tools: [module] })).rejects.toThrow(message);
  });

  test('a module that never finishes importing', async () => {
    await expect(create({ tools: [fixture('hangs-on-load.mjs')], workers: { loadTimeoutMs: 1_000 } })).rejects.toThrow(
      /hangs-on-load\.mjs did not finish loading within 1000 ms \(workers.loadTimeoutMs\)/,
    );
  });

  test('two tools with the same name', async () => {
    await expect(create({ tools: [exampleTool('calculator.ts'), fixture('duplicate-calculator.ts')] })).rejects.toThrow(
      /Two tools are named "calculator" \(module .*calculator\.ts and module .*duplicate-calculator\.ts\)/,
    );
  });

  test('a TypeScript module with a type-free syntax error', async () => {
    const dir = await mkdtemp(join(fixture('.'), 'tmp-'));
    const file = join(dir, 'broken.ts');
    await writeFile(file, 'export default {{ name: ');
    await expect(create({ tools: [file] })).rejects.toThrow(/broken\.ts failed to load/);
    const { rm } = await import('node:fs/promises');
    await rm(dir, { recursive: true });
  });
});

describe('bad options', () => {
  test.each([
    ['no tools array', {}, /option tools must be an array/],
    ['a bad tool entry', { tools: [42] }, /entry 0 is number; expected a module path/],
    ['a bad toolExecution', { tools: [], toolExecution: 'fast' }, /toolExecution must be "parallel" or "sequential"/],
    ['a bad hook', { tools: [], beforeToolCall: 'x' }, /beforeToolCall must be a function/],
    [
      'an unknown limit',
      { tools: [], limits: { timeout: 5 } },
      /unknown option "limits.timeout"; did you mean "limits.timeoutMs"\? the known options of limits are timeoutMs, maxMemoryMb, maxResultBytes, abortGraceMs/,
    ],
    ['a negative limit', { tools: [], limits: { timeoutMs: -1 } }, /timeoutMs must be a positive number/],
    ['a bad worker count', { tools: [], workers: { max: 0 } }, /workers.max must be an integer >= 1/],
    ['a host entry that is not a function', { tools: [], host: { x: 1 } }, /host.x must be a function/],
    [
      'an inline tool with a bad name',
      { tools: [{ name: 'has space', description: '', parameters: {}, execute() {} }] },
      /name" must be 1-64 letters/,
    ],
  ])('%s', async (_case, options, message) => {
    await expect(create(options as never)).rejects.toThrow(message);
  });

  test('executeBatch with a wrong argument rejects with what is wrong; a closed executor says so', async () => {
    const executor = await create({ tools: [] });
    await expect(executor.executeBatch('nope' as never)).rejects.toThrow(/toolCalls must be an array/);
    await expect(executor.executeBatch([{ name: 'x' }] as never)).rejects.toThrow(/toolCalls\[0\] needs a string "id"/);
    await executor.close();
    await executor.close();
    await expect(executor.executeBatch([])).rejects.toThrow(/executor is closed/);
  });
});
