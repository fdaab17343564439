import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// `npm test` on a fresh machine: its pretest script installs bubblewrap and
// redis-server when it can (root with apt-get), or stops at once with the one
// command to run. These tests never install or remove anything: they give the
// script a PATH of their own (with stand-ins, or without the commands) and,
// for the path that stops, TOOLPOOL_TEST_AS_USER=1 (behave as a user who is
// not root).

const root = fileURLToPath(new URL('..', import.meta.url));
const script = join(root, 'scripts/test-prerequisites.mjs');
let bin: string;

function check(
  path: string,
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string; stdout: string; ms: number }> {
  const start = Date.now();
  return new Promise((done) => {
    execFile(process.execPath, [script], { env: { PATH: path, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      done({
        code: error ? (typeof error.code === 'number' ? error.code : -1) : 0,
        stdout,
        stderr,
        ms: Date.now() - start,
      });
    });
  });
}

async function standIn(dir: string, name: string): Promise<void> {
  await writeFile(join(dir, name), '#!/bin/sh\nexit 0\n');
  await chmod(join(dir, name), 0o755);
}

beforeAll(async () => {
  bin = await mkdtemp(join(tmpdir(), 'toolpool-prereq-'));
});
afterAll(async () => {
  if (bin) await rm(bin, { recursive: true, force: true });
});

describe.skipIf(process.platform !== 'linux')("npm test's prerequisites (Linux: bubblewrap and redis-server)", () => {
  test('both there: the suite starts, nothing said', async () => {
    const both = await mkdtemp(join(bin, 'both-'));
    await standIn(both, 'bwrap');
    await standIn(both, 'redis-server');
    const result = await check(both, { TOOLPOOL_TEST_AS_USER: '1' });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: '' });
  });

  test('both missing and no way to install them: it stops at once with the one command to run', async () => {
    const empty = await mkdtemp(join(bin, 'empty-'));
    const result = await check(empty, { TOOLPOOL_TEST_AS_USER: '1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'npm test needs bwrap (the sandbox tier) and redis-server (the toolpool/bullmq tests), which are not installed. Install with:\n\n  sudo apt-get install -y bubblewrap redis-server\n',
    );
    expect(result.ms).toBeLessThan(30_000); // at once: no test ran, nothing waited (generous for a loaded machine)
  });

  test('one missing: the command names only that one', async () => {
    const some = await mkdtemp(join(bin, 'some-'));
    await standIn(some, 'bwrap');
    const result = await check(some, { TOOLPOOL_TEST_AS_USER: '1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('  sudo apt-get install -y redis-server\n');
    expect(result.stderr).not.toContain('bubblewrap');
  });

  // Only root reaches the install branch; without apt-get on PATH it must say what to install instead of trying.
  test.skipIf(process.getuid?.() !== 0)('as root without apt-get: the command, without sudo', async () => {
    const empty = await mkdtemp(join(bin, 'no-apt-'));
    const result = await check(empty);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('\n  apt-get install -y bubblewrap redis-server\n');
  });
});

test('npm test runs the check first, and CI runs npm test rather than installing on its own', async () => {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(manifest.scripts.pretest).toBe('node scripts/test-prerequisites.mjs');
  const ci = await readFile(join(root, '.ci/run'), 'utf8');
  expect(ci).toMatch(/npm test/);
  expect(ci).not.toMatch(/apt-get install/);
});
