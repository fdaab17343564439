/**
 * Permissions confine on every Node line, in every tier that accepts them,
 * files under the host's working folder included. Measured on Node 22, 24
 * and 26 (not 20): a worker thread started with `--permission
 * --allow-fs-read=X` may read everything under its process's working
 * folder, relative or absolute. Each case runs a fresh host whose working
 * folder holds a secret, and a tool that is granted only another folder.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import { fixture } from '../support/executors.ts';

const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-confine-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const project = join(scratch, 'project');
const data = join(project, 'data');
mkdirSync(data, { recursive: true });
writeFileSync(join(project, '.env'), 'API_KEY=hunter2\n');
writeFileSync(join(data, 'granted.txt'), 'granted\n');

function readAs(isolation: string, cwd: string, paths: string[]): Record<string, string> {
  // tsx named by its file, so it is found wherever the host runs.
  const host = spawnSync(
    process.execPath,
    ['--import', tsxLoader, fixture('permissions/host-in-folder.ts'), isolation, data, ...paths],
    {
      cwd,
      encoding: 'utf8',
      timeout: 90_000,
    },
  );
  const last = host.stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{')) throw new Error(`the host printed no result: ${host.stderr.slice(-2000)}`);
  return JSON.parse(last) as Record<string, string>;
}

const tiers = ['worker', 'process', ...(sandboxWorks ? ['sandbox'] : [])];

describe.each(tiers)('%s tier with permissions: { fsRead: [data] }', (isolation) => {
  test("a secret in the host's working folder is denied, by relative and by absolute path; the granted file is read", () => {
    const seen = readAs(isolation, project, ['.env', join(project, '.env'), join(data, 'granted.txt')]);
    expect(seen['.env']).toMatch(/^error: (ERR_ACCESS_DENIED|ENOENT)$/);
    expect(seen[join(project, '.env')]).toMatch(/^error: (ERR_ACCESS_DENIED|ENOENT)$/);
    expect(seen[join(data, 'granted.txt')]).toBe('granted');
  });

  test('a host started from / does not open the whole disk', () => {
    const seen = readAs(isolation, '/', ['/etc/hostname', join(project, '.env')]);
    expect(seen['/etc/hostname']).toMatch(/^error: (ERR_ACCESS_DENIED|ENOENT)$/);
    expect(seen[join(project, '.env')]).toMatch(/^error: (ERR_ACCESS_DENIED|ENOENT)$/);
  });
});
