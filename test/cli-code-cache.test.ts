/**
 * The CLI keeps V8's compiled code of the modules it loads (Node's compile
 * cache, Node 22.1+) so that the next `toolpool serve` starts sooner. Node
 * checks an entry only against sums anyone can compute, and code read from
 * it runs on the host: it must live only in a folder this user alone may
 * enter, and no tool may be granted a write into it (src/cli/code-cache.ts).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createExecutor } from '../src/index.ts';
import { fixture } from './support/executors.ts';

const bin = fileURLToPath(new URL('../bin/toolpool.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-code-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Node 22.1 added `module.enableCompileCache`; on Node 20 the CLI runs without a code cache. */
const nodeHasCompileCache = 'enableCompileCache' in Module;

/** Runs `toolpool serve --help` with XDG_CACHE_HOME set to `cacheHome`: the command loads its code, then exits. */
function serveHelp(cacheHome: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [bin, 'serve', '--help'],
      { env: { PATH: process.env.PATH ?? '', XDG_CACHE_HOME: cacheHome }, timeout: 60_000 },
      (error) => (error && child.exitCode === null ? reject(error) : resolve(child.exitCode)),
    );
  });
}

const filesUnder = (folder: string): string[] =>
  existsSync(folder)
    ? readdirSync(folder, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name)
    : [];

describe('where the code cache is kept', () => {
  test('in toolpool/v8 of the user’s cache folder, which only this user may enter (Node 22.1+; none on Node 20)', async () => {
    const cacheHome = mkdtempSync(join(scratch, 'home-'));
    expect(await serveHelp(cacheHome)).toBe(0);
    const folder = join(cacheHome, 'toolpool', 'v8');
    if (nodeHasCompileCache) {
      expect(filesUnder(folder).length).toBeGreaterThan(0);
      // Node makes its own folders in it 0777 less the umask: this one keeps every other user out of them.
      expect(readdirSync(join(cacheHome, 'toolpool'))).toEqual(['v8']);
    } else expect(filesUnder(folder)).toEqual([]);
  }, 90_000);

  test('a toolpool folder another user could write is not trusted with it: nothing is cached', async () => {
    const cacheHome = mkdtempSync(join(scratch, 'planted-'));
    const planted = join(cacheHome, 'toolpool');
    // Made first, writable by anyone: another user could swap what is in it.
    mkdirSync(planted);
    chmodSync(planted, 0o777);
    expect(await serveHelp(cacheHome)).toBe(0);
    expect(filesUnder(planted)).toEqual([]);
  }, 90_000);

  test('a v8 folder others may enter (made under umask 000) is not used', async () => {
    const cacheHome = mkdtempSync(join(scratch, 'open-'));
    const v8 = join(cacheHome, 'toolpool', 'v8');
    mkdirSync(v8, { recursive: true });
    chmodSync(v8, 0o777);
    expect(await serveHelp(cacheHome)).toBe(0);
    expect(filesUnder(v8)).toEqual([]);
  }, 90_000);
});

describe('no tool may be granted a write into it', () => {
  const saved = process.env.XDG_CACHE_HOME;
  afterEach(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
  });

  test.each([
    ['a folder that contains it', (home: string) => home],
    ['the folder itself', (home: string) => join(home, 'toolpool')],
    ['a folder inside it', (home: string) => join(home, 'toolpool', 'v8')],
  ])('fsWrite on %s is refused, in the process tier and the sandbox', async (_, grant) => {
    const cacheHome = mkdtempSync(join(scratch, 'grant-'));
    process.env.XDG_CACHE_HOME = cacheHome;
    for (const isolation of ['process', 'sandbox'] as const) {
      await expect(
        createExecutor({
          tools: [fixture('process-tier/write-file-at.ts')],
          isolation,
          permissions: { fsWrite: [grant(cacheHome)] },
        }),
      ).rejects.toThrow(/permissions.fsWrite .* reaches into toolpool's cache .*toolpool/);
    }
  });

  test('an MCP server in the sandbox may not be granted it either', async () => {
    const cacheHome = mkdtempSync(join(scratch, 'mcp-'));
    process.env.XDG_CACHE_HOME = cacheHome;
    await expect(
      createExecutor({
        mcpServers: { planter: { command: process.execPath, args: ['-e', ''], permissions: { fsWrite: [cacheHome] } } },
      }),
    ).rejects.toThrow(/planter.*permissions.fsWrite .* reaches into toolpool's cache/s);
  });
});
