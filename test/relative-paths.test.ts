/**
 * Relative paths under permissions (issue 28, item 5). On Node 22+ a
 * worker-tier tool with permissions runs in the process tier, whose child
 * works in an empty folder of its own (a worker there may read everything
 * under its working folder, so it must not be the host's). A relative path
 * then fails; the error says why and what to write instead.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { measurePermissionSupport } from '../src/isolation/common/permissions.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
// Under the host's working folder, where a relative path such as "test/.relative-x/data/x.txt" names it (a folder
// elsewhere could be reached from the child's own folder by a "../.." that happens to fit).
const scratch = mkdtempSync(join(process.cwd(), 'test', '.relative-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const data = join(scratch, 'data');
mkdirSync(data);
writeFileSync(join(data, 'x.txt'), 'x\n');
/** The file as a path relative to the host's working folder, as a tool author would write it. */
const relativePath = relative(process.cwd(), join(data, 'x.txt'));
const { confinesWorkers } = await measurePermissionSupport();

async function readAs(isolation: 'worker' | 'process') {
  const executor = await createExecutor({
    tools: [fixture('walls/read-relative.ts')],
    isolation,
    permissions: { fsRead: [data] },
  });
  const { results } = await executor.executeBatch([call('c', 'read_relative', { target: relativePath })]);
  return results[0]!;
}

describe('a relative path under permissions', () => {
  test.skipIf(confinesWorkers === false)(
    "in the worker tier of a line whose workers are confined (Node 20), resolves against the host's working folder",
    async () => {
      const result = await readAs('worker');
      expect(textOf(result)).toBe('x\n');
    },
  );

  test('in the process tier (where worker-tier tools run on Node 22+), fails with an error that says why and names the absolute path to use', async () => {
    const result = await readAs(confinesWorkers === false ? 'worker' : 'process');
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain(
      `The relative path ${JSON.stringify(relativePath)} did not resolve against the host's working folder`,
    );
    expect(text).toContain('working folder is an empty one of its own');
    expect(text).toContain(`Use an absolute path, such as ${JSON.stringify(join(process.cwd(), relativePath))}`);
  });

  test('an absolute path inside fsRead is read, and an error about an absolute path gets no hint', async () => {
    const executor = await createExecutor({
      tools: [fixture('walls/read-relative.ts')],
      isolation: 'process',
      permissions: { fsRead: [data] },
    });
    const { results } = await executor.executeBatch([
      call('a', 'read_relative', { target: join(data, 'x.txt') }),
      call('b', 'read_relative', { target: join(data, 'missing.txt') }),
    ]);
    expect(textOf(results[0]!)).toBe('x\n');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).not.toContain('relative path');
  });
});
