/**
 * The compile cache is a folder in the temporary folder, with a name anyone
 * can predict: another local user could make it first and swap what a
 * worker imports. And it holds every module this user compiled, a secret
 * compiled into one of them included: a module must read only its own.
 * Each case runs a fresh host with TMPDIR set to a scratch folder.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
const scratches: string[] = [];
afterAll(() => scratches.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

function scratch(): string {
  const folder = mkdtempSync(join(tmpdir(), 'toolpool-cache-attack-'));
  chmodSync(folder, 0o755);
  scratches.push(folder);
  return folder;
}

function runHost(tmp: string, isolation: string, allowed: string, targets: string[] = []): { cache: string; reads: Record<string, string> } {
  const host = spawnSync(process.execPath, ['--import', tsxLoader, fixture('cache/host.ts'), isolation, allowed, ...targets], {
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, TMPDIR: tmp },
  });
  const last = host.stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{')) throw new Error(`the host printed no result: ${host.stderr.slice(-2000)}`);
  return JSON.parse(last) as { cache: string; reads: Record<string, string> };
}

const uid = process.getuid?.() ?? 0;

describe('a compile cache folder someone else made first is not used', () => {
  test('one that others may write', () => {
    const tmp = scratch();
    const squatted = join(tmp, `toolpool-modules-${uid}`);
    mkdirSync(squatted);
    chmodSync(squatted, 0o777);
    expect(runHost(tmp, 'worker', tmp).cache).not.toBe(squatted);
  });

  // Only root can give a folder to another user; elsewhere the case above covers a folder that is not safe.
  test.skipIf(uid !== 0)("one owned by another user", () => {
    const tmp = scratch();
    const squatted = join(tmp, `toolpool-modules-${uid}`);
    mkdirSync(squatted, { mode: 0o755 });
    chownSync(squatted, 4242, 4242);
    expect(runHost(tmp, 'worker', tmp).cache).not.toBe(squatted);
  });

  test('a symbolic link', () => {
    const tmp = scratch();
    const elsewhere = join(tmp, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o755 });
    symlinkSync(elsewhere, join(tmp, `toolpool-modules-${uid}`));
    expect(runHost(tmp, 'worker', tmp).cache).not.toBe(join(tmp, `toolpool-modules-${uid}`));
  });
});

describe.each(['worker', 'process', ...(sandboxWorks ? ['sandbox'] : [])])('%s tier with permissions: a module reads nothing of the cache but its own', (isolation) => {
  test("another module's compiled file (a key in its code) is denied", () => {
    const tmp = scratch();
    const allowed = join(tmp, 'allowed');
    mkdirSync(allowed, { mode: 0o755 });
    const { reads } = runHost(tmp, isolation, allowed);
    expect(reads['other module']).toMatch(/^error: (ERR_ACCESS_DENIED|Access denied|ENOENT|EACCES)$/);
  });

  test('a node_modules folder planted in the temporary folder (beside the cache) is not granted', () => {
    const tmp = scratch();
    const allowed = join(tmp, 'allowed');
    const secret = join(tmp, 'secret');
    mkdirSync(allowed, { mode: 0o755 });
    mkdirSync(secret, { mode: 0o755 });
    writeFileSync(join(secret, '.env'), 'API_KEY=hunter2\n');
    mkdirSync(join(tmp, 'node_modules'), { mode: 0o755 });
    symlinkSync(secret, join(tmp, 'node_modules', 'planted'));
    const target = join(tmp, 'node_modules', 'planted', '.env');
    const { reads } = runHost(tmp, isolation, allowed, [target]);
    expect(reads[target]).toMatch(/^error: (ERR_ACCESS_DENIED|Access denied|ENOENT|EACCES)$/);
  });
});
