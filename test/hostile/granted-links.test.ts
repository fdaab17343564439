/**
 * Links in granted roots (issue 32): Node's permission model checks the
 * path a tool names and follows the links on it, so a symbolic link inside
 * an fsRead root reads, and one inside an fsWrite root writes, wherever it
 * points. Such a root is refused at createExecutor, naming the link and
 * what to do; a tool cannot make such a link itself (permission-walls.test.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createExecutor } from '../../src/index.ts';
import type { Permissions } from '../../src/isolation/common/permissions.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const create = useExecutors();
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-links-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let cases = 0;

/** A fresh read root, write root and an outside folder holding a secret. */
function layout() {
  const base = join(scratch, String(cases++));
  const dirs = { read: join(base, 'read'), write: join(base, 'write'), outside: join(base, 'outside') };
  for (const dir of Object.values(dirs)) mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
  writeFileSync(join(dirs.outside, 'secret.txt'), 'secret\n');
  writeFileSync(join(dirs.read, 'data.txt'), 'data\n');
  return { ...dirs, permissions: { fsRead: [dirs.read], fsWrite: [dirs.write] } satisfies Permissions };
}

const refusal = (link: string, option: string) =>
  expect.objectContaining({
    message: expect.stringMatching(
      new RegExp(
        `permissions\\.${option} holds a symbolic link, "${link.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}".*Remove the link.*grant its target.*isolation: "sandbox"`,
      ),
    ),
  });

describe.each(['process', 'worker'] as const)('createExecutor, isolation %s, with permissions', (isolation) => {
  test('refuses an fsRead root holding a link to a file outside the roots (the link read the secret before)', async () => {
    const { read, outside, permissions } = layout();
    const link = join(read, 'deep', 'er', 'innocent.txt');
    symlinkSync(join(outside, 'secret.txt'), link);
    await expect(createExecutor({ tools: [fixture('walls/run-code.ts')], isolation, permissions })).rejects.toEqual(
      refusal(link, 'fsRead'),
    );
  });

  test('refuses an fsWrite root holding a link to a folder outside, and one to a file of an fsRead root', async () => {
    const first = layout();
    symlinkSync(first.outside, join(first.write, 'out'));
    await expect(
      createExecutor({ tools: [fixture('walls/run-code.ts')], isolation, permissions: first.permissions }),
    ).rejects.toEqual(refusal(join(first.write, 'out'), 'fsWrite'));
    const second = layout();
    symlinkSync(join(second.read, 'data.txt'), join(second.write, 'data.txt'));
    await expect(
      createExecutor({ tools: [fixture('walls/run-code.ts')], isolation, permissions: second.permissions }),
    ).rejects.toEqual(refusal(join(second.write, 'data.txt'), 'fsWrite'));
  });

  test('refuses a dangling link that would lead outside, and a relative one', async () => {
    const first = layout();
    symlinkSync(join(first.outside, 'not-yet.txt'), join(first.write, 'later'));
    await expect(
      createExecutor({ tools: [fixture('walls/run-code.ts')], isolation, permissions: first.permissions }),
    ).rejects.toEqual(refusal(join(first.write, 'later'), 'fsWrite'));
    const second = layout();
    symlinkSync('../outside/secret.txt', join(second.read, 'relative'));
    await expect(
      createExecutor({ tools: [fixture('walls/run-code.ts')], isolation, permissions: second.permissions }),
    ).rejects.toEqual(refusal(join(second.read, 'relative'), 'fsRead'));
  });
});

describe('links that stay inside the roots', () => {
  test('are accepted, and a tool reads through them', async () => {
    const { read, write, permissions } = layout();
    symlinkSync(join(read, 'data.txt'), join(read, 'deep', 'alias.txt'));
    symlinkSync(join(write, 'deep'), join(write, 'shortcut'));
    symlinkSync(join(write, 'deep'), join(read, 'to-write'));
    const executor = await create({ tools: [fixture('walls/run-code.ts')], permissions });
    const code = `return require('node:fs').readFileSync(${JSON.stringify(join(read, 'deep', 'alias.txt'))}, 'utf8')`;
    const { results } = await executor.executeBatch([call('c', 'run_code', { target: code })]);
    expect(textOf(results[0]!)).toBe('data\n');
  });
});
