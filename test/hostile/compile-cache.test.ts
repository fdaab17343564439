/**
 * The compile cache is a folder in the temporary folder, with a name anyone
 * can predict: another local user could make it first and swap what a
 * worker imports. And it holds every module this user compiled, a secret
 * compiled into one of them included: a module must read only its own.
 * Each case runs a fresh host with TMPDIR set to a scratch folder (the two
 * reads of one tier with permissions share one).
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

function runHost(
  tmp: string,
  isolation: string,
  allowed: string,
  targets: string[] = [],
): { cache: string; reads: Record<string, string> } {
  const host = spawnSync(
    process.execPath,
    ['--import', tsxLoader, fixture('cache/host.ts'), isolation, allowed, ...targets],
    {
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, TMPDIR: tmp },
    },
  );
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
  test.skipIf(uid !== 0)('one owned by another user', () => {
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

describe.each(['worker', 'process', ...(sandboxWorks ? ['sandbox'] : [])])(
  '%s tier with permissions: a module reads nothing of the cache but its own',
  (isolation) => {
    // One host reads both (another module's compiled file, and what a planted node_modules leads to): the reads do not
    // depend on each other, and a host start (a fresh cache: every module and the runtime compiled anew) is what costs.
    let planted: { reads: Record<string, string>; target: string } | undefined;
    const plantedRun = () => {
      if (planted) return planted;
      const tmp = scratch();
      const allowed = join(tmp, 'allowed');
      const secret = join(tmp, 'secret');
      mkdirSync(allowed, { mode: 0o755 });
      mkdirSync(secret, { mode: 0o755 });
      writeFileSync(join(secret, '.env'), 'API_KEY=hunter2\n');
      mkdirSync(join(tmp, 'node_modules'), { mode: 0o755 });
      symlinkSync(secret, join(tmp, 'node_modules', 'planted'));
      const target = join(tmp, 'node_modules', 'planted', '.env');
      planted = { reads: runHost(tmp, isolation, allowed, [target]).reads, target };
      return planted;
    };

    test("another module's compiled file (a key in its code) is denied", () => {
      const { reads } = plantedRun();
      expect(reads['other module']).toMatch(/^error: (ERR_ACCESS_DENIED|Access denied|ENOENT|EACCES)$/);
    });

    test('a node_modules folder planted in the temporary folder (beside the cache) is not granted', () => {
      const { reads, target } = plantedRun();
      expect(reads[target]).toMatch(/^error: (ERR_ACCESS_DENIED|Access denied|ENOENT|EACCES)$/);
    });
  },
);

/**
 * What a worker runs is what the host compiled: a tool (without
 * permissions, or another process of the same user) that rewrites another
 * module's compiled copy, or toolpool's compiled worker runtime, in the
 * cache changes nothing that runs afterwards — not in that module's next
 * worker (worker tier) or restarted child (process tier), not in a domain
 * that starts its first workers after the rewrite. A rewritten module is
 * refused with a message saying so (a worker imports a compiled module only
 * with the content the host compiled); the runtime is handed to workers in
 * memory, so its file does not matter.
 */
function runRewrite(isolation: string, what: 'module' | 'runtime') {
  const tmp = scratch();
  const host = spawnSync(process.execPath, ['--import', tsxLoader, fixture('cache/rewrite-host.ts'), isolation, what], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, TMPDIR: tmp },
  });
  const last = host.stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{'))
    throw new Error(
      `the host printed no result (status ${host.status}, signal ${host.signal}): ${host.stderr.slice(-2000)}`,
    );
  return JSON.parse(last) as {
    before: string;
    rewrite: string;
    after: string;
    bystander: string;
    attackerCodeRan: boolean;
  };
}

describe.each(['worker', 'process', ...(sandboxWorks ? ['sandbox'] : [])])(
  '%s tier: a rewritten compiled copy does not run',
  (isolation) => {
    test("another module's compiled copy, rewritten, is not what its next worker or child runs", () => {
      const seen = runRewrite(isolation, 'module');
      expect(seen.before).toBe('genuine');
      // The sandbox binds the cache read-only: the rewrite itself fails there.
      if (isolation === 'sandbox') expect(seen.rewrite).toMatch(/^refused: .*(EROFS|read-only|EACCES)/);
      else expect(seen.rewrite).toBe('written');
      expect(seen.attackerCodeRan).toBe(false);
      expect(seen.after).not.toContain('attacker code');
      expect(seen.after).toMatch(
        isolation === 'sandbox'
          ? /^genuine$/
          : /^(genuine|error: .*is not what toolpool compiled \(it was changed after compiling)/,
      );
      expect(seen.bystander).toBe('bystander');
    }, 150_000);

    test("toolpool's compiled worker runtime, rewritten, runs in no worker started afterwards", () => {
      const seen = runRewrite(isolation, 'runtime');
      expect(seen.attackerCodeRan).toBe(false);
      expect(seen.after).toBe('genuine');
      expect(seen.bystander).toBe('bystander');
    }, 150_000);
  },
);
