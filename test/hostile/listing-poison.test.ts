import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createExecutor, type Executor } from '../../src/executor/executor.ts';
import { compileCacheDir } from '../../src/isolation/worker/cache-folder.ts';
import { listingKeyOf, plantListing, plantedInfo } from '../support/listings.ts';

// The listing cache lives where tools without permissions can write: what a
// tool plants there may change what is listed, never what runs, and may not
// hang or exhaust the host.

const folder = await mkdtemp(join(tmpdir(), 'toolpool-listing-poison-'));
const nonce = `${process.pid}-${Date.now()}`;
afterAll(() => rm(folder, { recursive: true, force: true }));

const open: Executor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((executor) => executor.close()));
});

async function start(tools: string[]): Promise<Executor> {
  const executor = await createExecutor({ tools, workers: { loadTimeoutMs: 60_000 } }, { listFromCache: true });
  open.push(executor);
  return executor;
}

async function toolModule(dir: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}.mjs`);
  await writeFile(
    file,
    [
      `// ${nonce}`,
      'export default {',
      `  name: ${JSON.stringify(name)},`,
      "  description: 'A tool.',",
      "  parameters: { type: 'object', properties: {} },",
      `  execute: () => ({ content: [{ type: 'text', text: 'ran ${name}' }] }),`,
      '};',
      '',
    ].join('\n'),
  );
  return file;
}

async function listingPath(file: string): Promise<string> {
  const key = await listingKeyOf(file);
  await mkdir(join(compileCacheDir(), 'listings'), { recursive: true });
  return join(compileCacheDir(), 'listings', `${key}.json`);
}

async function withinMs<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a planted listing file', () => {
  test('a FIFO in place of the listing does not hang the start', async () => {
    const file = await toolModule(join(folder, 'fifo'), 'fifo');
    const path = await listingPath(file);
    await rm(path, { force: true });
    execFileSync('mkfifo', [path]);
    try {
      const starting = start([file]);
      const outcome = await withinMs(starting, 15_000);
      expect(outcome).not.toBe('timed out');
      expect((outcome as Executor).definitions.map((d) => d.name)).toEqual(['fifo']);
    } finally {
      // Unblocks a reader stuck in open() (if any), then removes the FIFO.
      try {
        execFileSync('sh', ['-c', `exec 3<>"${path}"; exec 3>&-`]);
      } catch {}
      await unlink(path).catch(() => undefined);
    }
  }, 30_000);

  test('a link to /dev/zero in place of the listing does not exhaust the host', async () => {
    const file = await toolModule(join(folder, 'zero'), 'zero');
    const path = await listingPath(file);
    await rm(path, { force: true });
    await symlink('/dev/zero', path);
    try {
      const before = process.memoryUsage().rss;
      const executor = await withinMs(start([file]), 15_000);
      expect(executor).not.toBe('timed out');
      expect((executor as Executor).definitions.map((d) => d.name)).toEqual(['zero']);
      expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024);
    } finally {
      await unlink(path).catch(() => undefined);
    }
  }, 30_000);

  test('"skipped" planted for a tool module of a folder does not hide the tool: it is described all the same', async () => {
    const dir = join(folder, 'skipped');
    const file = await toolModule(dir, 'hidden');
    await (await start([dir])).close();
    const path = await listingPath(file);
    await writeFile(path, JSON.stringify({ skipped: true }));
    const executor = await start([dir]);
    const changed = new Promise((resolve) => executor.on('tools_changed', resolve));
    if (executor.definitions.length === 0) await withinMs(changed, 15_000);
    expect(executor.definitions.map((d) => d.name)).toEqual(['hidden']);
    const { results } = await executor.executeBatch([{ id: 'c', name: 'hidden', arguments: {} }]);
    expect(results[0]!.isError).toBe(false);
  }, 30_000);

  test("a listing that claims another module's name does not stop the start", async () => {
    const dir = join(folder, 'clash');
    const victim = await toolModule(dir, 'victim');
    const other = await toolModule(dir, 'other');
    await (await start([dir])).close();
    await plantListing(other, { ...plantedInfo, name: 'victim' });
    const executor = await start([dir]);
    const { results } = await executor.executeBatch([{ id: 'c', name: 'victim', arguments: {} }]);
    expect(results[0]!.isError).toBe(false);
    void victim;
  }, 30_000);

  test('a listing that claims the sandbox tier does not stop the start where bubblewrap is missing', async () => {
    const file = await toolModule(join(folder, 'sandboxed'), 'sandboxed');
    await (await start([file])).close();
    await plantListing(file, { ...plantedInfo, name: 'sandboxed', isolation: 'sandbox' });
    const path = process.env.PATH;
    process.env.PATH = folder; // no bwrap here
    try {
      const executor = await start([file]);
      const { results } = await executor.executeBatch([{ id: 'c', name: 'sandboxed', arguments: {} }]);
      expect(results[0]!.isError).toBe(false);
    } finally {
      process.env.PATH = path;
    }
  }, 30_000);

  test('a listing that renames a tool named in toolLimits does not stop the start', async () => {
    const file = await toolModule(join(folder, 'limited'), 'limited');
    const options = { tools: [file], toolLimits: { limited: { timeoutMs: 5_000 } } };
    await (await createExecutor(options, { listFromCache: true })).close();
    await plantListing(file, { ...plantedInfo, name: 'renamed' });
    const executor = await createExecutor(options, { listFromCache: true });
    open.push(executor);
    const { results } = await executor.executeBatch([{ id: 'c', name: 'limited', arguments: {} }]);
    expect(results[0]!.isError).toBe(false);
  }, 30_000);
});
