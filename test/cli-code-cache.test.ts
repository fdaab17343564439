/**
 * The CLI keeps V8's compiled code of the modules it loads (Node's compile
 * cache, Node 22.1+) so that the next `toolpool serve` starts sooner. Code
 * read from that cache runs on the host: it must live only in a folder this
 * user owns and nobody else may write (src/cli/code-cache.ts).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';

const bin = fileURLToPath(new URL('../bin/toolpool.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-code-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Node 22.1 added `module.enableCompileCache`; on Node 20 the CLI runs without a code cache. */
const nodeHasCompileCache = 'enableCompileCache' in Module;

/** Runs `toolpool serve --help` with TMPDIR set to `temp`: the command loads its code, then exits. */
function serveHelp(temp: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [bin, 'serve', '--help'],
      { env: { PATH: process.env.PATH ?? '', TMPDIR: temp }, timeout: 60_000 },
      (error) => (error && child.exitCode === null ? reject(error) : resolve(child.exitCode)),
    );
  });
}

const filesUnder = (folder: string): string[] =>
  existsSync(folder)
    ? readdirSync(folder, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name)
    : [];

const cacheFolderIn = (temp: string) => join(temp, `toolpool-modules-${process.getuid?.() ?? 'user'}`);

test('a command keeps its code cache in the v8/ folder of toolpool’s own cache (Node 22.1+; none on Node 20)', async () => {
  const temp = mkdtempSync(join(scratch, 'owned-'));
  expect(await serveHelp(temp)).toBe(0);
  const cached = filesUnder(join(cacheFolderIn(temp), 'v8'));
  if (nodeHasCompileCache) expect(cached.length).toBeGreaterThan(0);
  else expect(cached).toEqual([]);
}, 90_000);

test('a cache folder another user could write is not trusted with it: that run caches nothing there', async () => {
  const temp = mkdtempSync(join(scratch, 'planted-'));
  // Made first, writable by anyone, as another user of a shared /tmp could: code read from it would run on the host.
  const planted = cacheFolderIn(temp);
  mkdirSync(planted);
  chmodSync(planted, 0o777);
  expect(await serveHelp(temp)).toBe(0);
  expect(filesUnder(planted)).toEqual([]);
  // The run used a private folder of its own instead (toolpool-modules-<uid>-XXXXXX), and removed it as it exited.
  const ours = readdirSync(temp).filter((name) => name.startsWith('toolpool-modules-'));
  expect(ours).toEqual([`toolpool-modules-${process.getuid?.() ?? 'user'}`]);
}, 90_000);
