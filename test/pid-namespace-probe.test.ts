/**
 * The process tier's PID namespace (and, under permissions, its read-only
 * file system) comes from bubblewrap where a probe says it works. A probe
 * that gave no lasting answer, on a machine too loaded to start bwrap
 * (timed out, out of processes, memory, descriptors or namespaces), must
 * not count as "bubblewrap does not work here": that would run every later
 * child of the process without those walls.
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

test('a refusal that lasts is one; a timeout, a shortage or a crash is no answer', async () => {
  const refused = { kind: 'refused' };
  // The kernel or a policy forbids unprivileged user namespaces (bwrap's words on Debian, Ubuntu's AppArmor, Docker).
  for (const words of [
    'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.',
    'bwrap: setting up uid map: Permission denied',
    'bwrap: Creating new namespace failed: Operation not permitted',
  ])
    expect(await askBwrap(await fakeBwrap(`refuses-${words.length}`, `echo '${words}' >&2; exit 1`), 5_000)).toEqual(
      refused,
    );
  expect(await askBwrap(await fakeBwrap('hangs', 'exec sleep 5'), 300)).toMatchObject({
    kind: 'no answer',
    why: expect.stringContaining('did not end within 300 ms'),
  });
  for (const words of [
    'bwrap: Creating new namespace failed: Resource temporarily unavailable',
    'bwrap: Creating new namespace failed: No space left on device',
  ])
    expect(await askBwrap(await fakeBwrap(`short-${words.length}`, `echo '${words}' >&2; exit 1`), 5_000)).toEqual({
      kind: 'no answer',
      why: `it exited with 1: ${words}`,
    });
  // The command inside aborted (out of memory or threads).
  expect(await askBwrap(await fakeBwrap('aborts', 'exit 134'), 5_000)).toMatchObject({ kind: 'no answer' });
});

// Without bubblewrap on PATH there is nothing to probe: the answer is "no bwrap" and no probe runs.
test.skipIf(findBwrap() === undefined)(
  'no answer (or a probe that threw) fails that launch and is forgotten; the next launch asks again, and an answer is kept',
  async () => {
    const asked: string[] = [];
    const answer = (value: ProbeAnswer) => async () => (asked.push(value.kind), value);
    await expect(pidNamespaceSupport(answer({ kind: 'no answer', why: 'it exited with 1: ENOSPC' }))).rejects.toThrow(
      /gave no lasting answer to its probe \(it exited with 1: ENOSPC\).* asks again/,
    );
    await expect(
      pidNamespaceSupport(async () => {
        asked.push('threw');
        throw new Error('spawn ENOMEM');
      }),
    ).rejects.toThrow(/spawn ENOMEM/);
    expect(await pidNamespaceSupport(answer({ kind: 'works' }))).toBe(findBwrap());
    // Answered: kept. A later probe is not run.
    expect(await pidNamespaceSupport(answer({ kind: 'refused' }))).toBe(findBwrap());
    expect(asked).toEqual(['no answer', 'threw', 'works']);
  },
);
