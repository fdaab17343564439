/**
 * The process tier's PID namespace (and, under permissions, its read-only
 * file system) comes from bubblewrap where a probe says it works. A probe
 * that gave no answer, on a machine too loaded to start bwrap within the
 * probe's bound, must not count as "bubblewrap does not work here": that
 * would run every later child of the process without those walls.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { findBwrap } from '../src/isolation/common/find-bwrap.ts';
import { askBwrap, pidNamespaceSupport, type ProbeAnswer } from '../src/isolation/process/pid-namespace.ts';

const folder = await mkdtemp(join(tmpdir(), 'toolpool-probe-'));
afterAll(() => rm(folder, { recursive: true, force: true }));

async function fakeBwrap(name: string, body: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

test('a bwrap that does not answer within the bound gives no answer; one that exits non-zero refuses', async () => {
  expect(await askBwrap(await fakeBwrap('hangs', 'exec sleep 5'), 300)).toBe('no answer');
  expect(await askBwrap(await fakeBwrap('refuses', 'exit 1'), 5_000)).toBe('refused');
});

// Without bubblewrap on PATH there is nothing to probe: the answer is "no bwrap" and no probe runs.
test.skipIf(findBwrap() === undefined)(
  'no answer fails that launch and is forgotten; the next launch asks again, and an answer is kept',
  async () => {
    const asked: ProbeAnswer[] = [];
    const answer = (value: ProbeAnswer) => async () => (asked.push(value), value);
    await expect(pidNamespaceSupport(answer('no answer'))).rejects.toThrow(/did not answer its probe .* tries again/);
    expect(await pidNamespaceSupport(answer('works'))).toBe(findBwrap());
    // Answered: kept. A later probe is not run.
    expect(await pidNamespaceSupport(answer('refused'))).toBe(findBwrap());
    expect(asked).toEqual(['no answer', 'works']);
  },
);
