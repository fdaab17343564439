import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-error-texts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const nodeMajor = Number(process.versions.node.split('.')[0]);

describe('a denial by the permission model says which option to change', () => {
  test('a read outside permissions.fsRead and a write outside permissions.fsWrite name the path and the option', async () => {
    const secret = join(scratch, 'secret.txt');
    writeFileSync(secret, 'x');
    const allowed = mkdtempSync(join(scratch, 'allowed-'));
    const executor = await createExecutor({
      tools: [fixture('errors/fails.ts')],
      permissions: { fsRead: [allowed], fsWrite: [allowed] },
    });
    const { results } = await executor.executeBatch([
      call('1', 'fails', { action: 'read', target: secret }),
      call('2', 'fails', { action: 'write', target: join(scratch, 'out.txt') }),
      call('3', 'fails', { action: 'spawn', target: '/bin/true' }),
    ]);
    expect(results.map((result) => result.isError)).toEqual([true, true, true]);
    expect(textOf(results[0]!)).toBe(
      `Access denied: the tool may not read ${JSON.stringify(secret)} (Node's permission model, ERR_ACCESS_DENIED). ` +
        'To allow it, add the path or a folder that holds it to permissions.fsRead (toolpool serve: --allow-read).',
    );
    expect(textOf(results[1]!)).toMatch(
      /^Access denied: the tool may not write ".*out\.txt" .* permissions\.fsWrite \(toolpool serve: --allow-write\)\.$/,
    );
    expect(textOf(results[2]!)).toMatch(
      /^Access denied: starting a child process is not allowed to a tool under permissions/,
    );
  });

  test.runIf(nodeMajor >= 25)('Node 25+: a connection without permissions.net names permissions.net', async () => {
    const executor = await createExecutor({ tools: [fixture('errors/fails.ts')], permissions: { fsRead: [scratch] } });
    const { results } = await executor.executeBatch([
      call('1', 'fails', { action: 'fetch', target: 'http://127.0.0.1:39999/' }),
    ]);
    expect(textOf(results[0]!)).toMatch(
      /^fetch failed \(cause: Access denied: the tool may not reach 127\.0\.0\.1:39999 .*set permissions\.net: true/,
    );
  });

  test('the sandbox: a host that is not in permissions.net is named with permissions.net', async () => {
    const executor = await createExecutor({ tools: [fixture('errors/fails.ts')], isolation: 'sandbox' });
    const { results } = await executor.executeBatch([
      call('1', 'fails', { action: 'fetch', target: 'http://example.com/' }),
    ]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(
      /^fetch failed \(cause: getaddrinfo (ENOTFOUND|EAI_AGAIN) example\.com\) \(The tool runs in toolpool's sandbox, where only the "host:port" entries of permissions\.net can be reached, and example\.com is not one of them/,
    );
  });
});

describe('error.cause is kept in the error result', () => {
  test('in a worker: each cause, in order', async () => {
    const executor = await createExecutor({ tools: [fixture('errors/fails.ts')] });
    const { results } = await executor.executeBatch([
      call('1', 'fails', { action: 'cause', target: 'settings.json is not JSON' }),
    ]);
    expect(textOf(results[0]!)).toBe(
      'could not load the settings (cause: settings.json is not JSON (cause: the disk is gone))',
    );
  });

  test('inline, bounded: a huge or endless chain of causes stays a few KB', async () => {
    const endless = new Error('loop');
    endless.cause = endless;
    const huge = new Error('outer', { cause: new Error('x'.repeat(100_000)) });
    const thrower = defineTool({
      name: 'thrower',
      description: 'x',
      parameters: Type.Object({ which: Type.String() }),
      execute: ({ which }) => {
        throw which === 'endless' ? endless : huge;
      },
    });
    const executor = await createExecutor({ tools: [thrower] });
    const { results } = await executor.executeBatch([
      call('1', 'thrower', { which: 'endless' }),
      call('2', 'thrower', { which: 'huge' }),
    ]);
    expect(textOf(results[0]!)).toBe('loop');
    expect(textOf(results[1]!)).toMatch(/^outer \(cause: x{1000}… \(100000 chars\)\)$/);
  });
});

describe('a validation error for a union or an enum lists the allowed values', () => {
  const picker = defineTool({
    name: 'picker',
    description: 'x',
    parameters: Type.Object({
      mode: Type.Union([Type.Literal('fast'), Type.Literal('exact')]),
      size: Type.Optional(Type.Union([Type.Integer(), Type.Literal('auto')])),
      color: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['red', 'green'] })),
    }),
    execute: () => ({ content: [] }),
  });
  const zodPicker = defineTool({
    name: 'zod_picker',
    description: 'x',
    parameters: z.object({ mode: z.enum(['fast', 'exact']), level: z.union([z.literal(1), z.literal(2)]).optional() }),
    execute: () => ({ content: [] }),
  });

  test('TypeBox literal unions, mixed unions and enums', async () => {
    const executor = await createExecutor({ tools: [picker] });
    const { results } = await executor.executeBatch([
      call('1', 'picker', { mode: 'slow', size: 'big', color: 'blue' }),
    ]);
    expect(textOf(results[0]!)).toBe(
      'Validation failed for tool "picker":\n  - mode: must be one of "fast", "exact"\n  - size: must be one of: integer, "auto"\n  - color: must be one of "red", "green"\n' +
        'Received arguments: {"mode":"slow","size":"big","color":"blue"}',
    );
  });

  test('Zod enums and literal unions', async () => {
    const executor = await createExecutor({ tools: [zodPicker] });
    const { results } = await executor.executeBatch([call('1', 'zod_picker', { mode: 'slow', level: 3 })]);
    expect(textOf(results[0]!)).toContain('  - mode: must be one of "fast", "exact"\n  - level: must be one of 1, 2\n');
  });
});
