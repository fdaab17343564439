/**
 * The process tier under `permissions` as a wall (issue 32): what Node's
 * permission model leaves open, attacked from a tool. Every case runs the
 * attack's code in a process-tier child whose permissions grant one read
 * and one write folder; the target lies outside both.
 */
import { pathToFileURL } from 'node:url';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, test } from 'vitest';
import { pidNamespaceArgs, pidNamespaceSupport } from '../../src/isolation/process/pid-namespace.ts';
import type { Permissions } from '../../src/isolation/common/permissions.ts';
import { createExecutor, type Executor, type ExecutorOptions } from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';
import { eventually } from '../support/leaks.ts';

const open: Executor[] = [];
afterAll(() => Promise.all(open.map((executor) => executor.close())));
async function create(options: ExecutorOptions): Promise<Executor> {
  const executor = await createExecutor(options);
  open.push(executor);
  return executor;
}
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-walls-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const readRoot = join(scratch, 'read');
const writeRoot = join(scratch, 'write');
/** Outside every root, 0700 like a user's private folder. */
const outside = join(scratch, 'outside');
for (const dir of [readRoot, writeRoot, outside]) mkdirSync(dir);
chmodSync(outside, 0o700);
writeFileSync(join(outside, 'secret.txt'), 'secret\n');
mkdirSync(join(outside, 'pkg'));
writeFileSync(join(outside, 'pkg', 'package.json'), JSON.stringify({ main: 'hidden-entry-name.js' }));
const permissions: Permissions = { fsRead: [readRoot], fsWrite: [writeRoot] };
const [major] = process.versions.node.split('.').map(Number) as [number];
const hasSqlite = major >= 22;
// module.registerHooks (in-thread resolve hooks) is what hides import() probes; Node 20 has none.
const hasSyncHooks = typeof ((await import('node:module')) as { registerHooks?: unknown }).registerHooks === 'function';

const runners = new Map<string, ReturnType<typeof startRunner>>();
/** One executor per set of permissions, shared by the cases (each child start costs seconds on a loaded machine). */
function runner(extra: Partial<Permissions> = {}) {
  const key = JSON.stringify(extra);
  if (!runners.has(key)) runners.set(key, startRunner(extra));
  return runners.get(key)!;
}

async function startRunner(extra: Partial<Permissions>) {
  const executor = await create({
    tools: [fixture('walls/run-code.ts')],
    permissions: { ...permissions, ...extra },
    workers: { max: 2 },
  });
  return async (code: string) => {
    const { results } = await executor.executeBatch([call('c', 'run_code', { target: code })]);
    return textOf(results[0]!);
  };
}

describe('V8 log files', () => {
  test.each([
    ['--log --logfile=%s --no-logfile-per-isolate'],
    ['--prof --logfile=%s --no-logfile-per-isolate'],
    ['--trace-gc --trace-gc-nvp --logfile=%s --no-logfile-per-isolate --log-code'],
  ])('%s cannot make V8 write outside fsWrite, also once the child starts more workers', async (flags) => {
    const kept = join(outside, 'kept.conf');
    const created = join(outside, 'created.log');
    writeFileSync(kept, 'keep me\n');
    chmodSync(kept, 0o600);
    const run = await runner();
    for (const target of [kept, created]) {
      const answer = await run(
        `require('node:v8').setFlagsFromString(${JSON.stringify(flags.replace('%s', target))}); return 'set'`,
      );
      expect(answer).toMatch(/ERR_ACCESS_DENIED.*v8\.setFlagsFromString is not available under permissions/);
    }
    // Three calls at once: the child's pool starts another worker (a new isolate, when V8 would open its log).
    const slow = `await new Promise((r) => setTimeout(r, 300)); return 'ran'`;
    expect(await Promise.all([run(slow), run(slow), run(slow)])).toEqual(['ran', 'ran', 'ran']);
    expect(readFileSync(kept, 'utf8')).toBe('keep me\n');
    expect(existsSync(created)).toBe(false);
  });

  test('the refusal cannot be undone from tool code (the original is nowhere to be found)', async () => {
    const run = await runner();
    const code = `const v8 = require('node:v8');
      const attempts = [];
      try { v8.setFlagsFromString = () => 'replaced'; delete v8.setFlagsFromString; Object.defineProperty(v8, 'setFlagsFromString', { value: () => 'redefined' }); } catch (e) { attempts.push('redefine ' + e.name); }
      try { v8.setFlagsFromString('--log'); } catch (e) { attempts.push('cjs ' + e.code); }
      const esm = await import('node:v8');
      try { esm.setFlagsFromString('--log'); } catch (e) { attempts.push('esm ' + e.code); }
      try { process.getBuiltinModule?.('node:v8').setFlagsFromString('--log'); } catch (e) { attempts.push('builtin ' + e.code); }
      return attempts.join(',')`;
    const answer = await run(code);
    expect(answer).toContain('redefine TypeError');
    expect(answer).toContain('cjs ERR_ACCESS_DENIED');
    expect(answer).toContain('esm ERR_ACCESS_DENIED');
    if (typeof process.getBuiltinModule === 'function') expect(answer).toContain('builtin ERR_ACCESS_DENIED');
  });

  test('heap snapshots near the heap limit and the compile cache (files V8 and Node write unchecked) are refused', async () => {
    const run = await runner();
    expect(await run(`require('node:v8').setHeapSnapshotNearHeapLimit(1); return 'set'`)).toMatch(/ERR_ACCESS_DENIED/);
    if (major >= 22)
      expect(
        await run(`require('node:module').enableCompileCache(${JSON.stringify(join(outside, 'cc'))}); return 'set'`),
      ).toMatch(/ERR_ACCESS_DENIED/);
    expect(existsSync(join(outside, 'cc'))).toBe(false);
  });
});

const bwrap = await pidNamespaceSupport();

describe.skipIf(!bwrap)(
  "structure behind the guards, where bubblewrap works (it starts the process tier's PID namespace)",
  () => {
    test('under permissions the child sees the file system read-only outside fsWrite: V8 cannot open a log file there even unguarded', () => {
      const target = join(outside, 'unguarded-v8.log');
      const inside = join(writeRoot, 'unguarded-v8.log');
      const write = `const fs = require('node:fs'); const seen = [];
      for (const path of ${JSON.stringify([join(outside, 'plain.txt'), join(writeRoot, 'plain.txt')])}) {
        try { fs.writeFileSync(path, 'x'); seen.push('wrote'); } catch (e) { seen.push(e.code); }
      }
      console.log(seen.join(','));`;
      // No permission flags here: only the mounts stand between the process and the file.
      const run = (logfile: string) =>
        spawnSync(
          bwrap!,
          pidNamespaceArgs(
            [process.execPath, '--log', `--logfile=${logfile}`, '--no-logfile-per-isolate', '-e', write],
            [writeRoot],
          ),
          { encoding: 'utf8', env: {} },
        );
      // V8, refused its log file, logs to stdout instead; the script's own line is among its lines.
      const outsideRun = run(target);
      expect(outsideRun.stdout.split('\n')).toContain('EROFS,wrote');
      expect(existsSync(target)).toBe(false);
      expect(existsSync(join(outside, 'plain.txt'))).toBe(false);
      run(inside);
      expect(existsSync(inside)).toBe(true);
    });
  },
);

describe.skipIf(!hasSqlite)('node:sqlite (Node 22+; Node 20 has no node:sqlite)', () => {
  test.each([
    [
      'open a file',
      (db: string) =>
        `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(${JSON.stringify(db)}).exec('create table t(a)'); return 'opened'`,
    ],
    [
      'ATTACH',
      (db: string) =>
        `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(':memory:').exec(${JSON.stringify(`attach '${db}' as x; create table x.t(a)`)}); return 'attached'`,
    ],
    [
      'VACUUM INTO',
      (db: string) =>
        `const { DatabaseSync } = require('node:sqlite'); new DatabaseSync(':memory:').exec(${JSON.stringify(`create table t(a); vacuum into '${db}'`)}); return 'vacuumed'`,
    ],
    [
      'ESM import',
      (db: string) =>
        `const { DatabaseSync } = await import('node:sqlite'); new DatabaseSync(${JSON.stringify(db)}).exec('create table t(a)'); return 'opened'`,
    ],
  ])('%s outside the roots fails and creates nothing', async (_what, attack) => {
    const run = await runner();
    const db = join(outside, `${_what.replace(/\W/g, '')}.db`);
    expect(await run(attack(db))).toMatch(/ERR_ACCESS_DENIED.*node:sqlite/);
    expect(existsSync(db)).toBe(false);
  });
});

describe('module resolution probes', () => {
  test('require.resolve answers the same for a file outside fsRead that exists and one that does not', async () => {
    const run = await runner();
    const probe = (path: string) =>
      run(
        `try { return 'found ' + require.resolve(${JSON.stringify(path)}); } catch (e) { return e.code + ' ' + e.message; }`,
      );
    const existing = await probe(join(outside, 'secret.txt'));
    const missing = await probe(join(outside, 'missing.txt'));
    expect(existing).not.toMatch(/^found/);
    expect(existing.replace('secret.txt', 'X')).toBe(missing.replace('missing.txt', 'X'));
  });

  test('require(dir) outside fsRead neither tells that it exists nor leaks its package.json main', async () => {
    const run = await runner();
    const probe = (path: string) =>
      run(
        `try { return 'loaded ' + require(${JSON.stringify(path)}); } catch (e) { return e.code + ' ' + e.message; }`,
      );
    const existing = await probe(join(outside, 'pkg'));
    const missing = await probe(join(outside, 'nopkg'));
    expect(existing).not.toContain('hidden-entry-name');
    expect(existing.replace('pkg', 'X')).toBe(missing.replace('nopkg', 'X'));
  });

  test("Module._findPath and require.resolve's paths option do not probe outside fsRead", async () => {
    const run = await runner();
    const probe = (name: string) =>
      run(`const M = require('node:module');
        let resolved; try { resolved = require.resolve(${JSON.stringify(name)}, { paths: [${JSON.stringify(outside)}] }); } catch (e) { resolved = e.code + ' ' + e.message; }
        return String(M._findPath(${JSON.stringify(join(outside, name))}, [''], false)) + ' | ' + resolved;`);
    const existing = await probe('secret.txt');
    const missing = await probe('missing.txt');
    expect(existing).toMatch(/^false \| /);
    expect(existing.replace('secret.txt', 'X')).toBe(missing.replace('missing.txt', 'X'));
  });

  test.skipIf(!hasSyncHooks)(
    'import() answers the same for a file outside fsRead that exists and one that does not (Node 22.15+; Node 20 has no in-thread resolve hooks)',
    async () => {
      const run = await runner();
      const probe = (path: string) =>
        run(
          `try { await import(${JSON.stringify(path)}); return 'imported'; } catch (e) { return e.code + ' ' + e.message; }`,
        );
      const existing = await probe(join(outside, 'secret.txt'));
      const missing = await probe(join(outside, 'missing.txt'));
      expect(existing).not.toBe('imported');
      expect(existing.replace('secret.txt', 'X')).toBe(missing.replace('missing.txt', 'X'));
    },
  );

  test('a module inside fsRead still resolves and loads', async () => {
    writeFileSync(join(readRoot, 'granted.cjs'), 'module.exports = "granted module";');
    const run = await runner();
    expect(await run(`return require(${JSON.stringify(join(readRoot, 'granted.cjs'))})`)).toBe('granted module');
    // A module runs from the content the host compiled (a data: URL), so a dynamic import names a file by its file: URL.
    expect(
      await run(`return (await import(${JSON.stringify(pathToFileURL(join(readRoot, 'granted.cjs')).href)})).default`),
    ).toBe('granted module');
  });
});

describe('Unix sockets', () => {
  const listening: Server[] = [];
  afterAll(() => Promise.all(listening.map((server) => new Promise((resolve) => server.close(resolve)))));
  /** A socket like the host's Redis: in a 0700 folder outside the roots. Counts who connects. */
  async function socketAt(path: string) {
    const seen = { connections: 0 };
    const server = createServer((socket) => {
      seen.connections++;
      socket.on('error', () => undefined);
      socket.end('+PONG\r\n');
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    listening.push(server);
    return seen;
  }
  const connectTo = (path: string) =>
    `return await new Promise((resolve) => {
      const socket = require('node:net').connect(${JSON.stringify(path)});
      socket.on('connect', () => { socket.destroy(); resolve('connected'); });
      socket.on('error', (e) => resolve('error ' + e.code + ' ' + e.message));
    })`;

  test.each([[{}], [{ net: true }]] as const)(
    'connecting to a socket file outside the roots fails (permissions %j)',
    async (extra) => {
      const path = join(outside, `redis-${Object.keys(extra).length}.sock`);
      const seen = await socketAt(path);
      const run = await runner(extra);
      expect(await run(connectTo(path))).toMatch(/^error ERR_ACCESS_DENIED/);
      expect(
        await run(`return await new Promise((resolve) => {
      const request = require('node:http').get({ socketPath: ${JSON.stringify(path)}, path: '/' });
      request.on('response', () => resolve('answered'));
      request.on('error', (e) => resolve('error ' + e.code));
    })`),
      ).toBe('error ERR_ACCESS_DENIED');
      expect(
        await run(`return await new Promise((resolve) => {
      const socket = require('node:tls').connect({ path: ${JSON.stringify(path)}, rejectUnauthorized: false });
      socket.on('secureConnect', () => { socket.destroy(); resolve('connected'); });
      socket.on('error', (e) => resolve('error ' + e.code));
    })`),
      ).toBe('error ERR_ACCESS_DENIED');
      expect(seen.connections).toBe(0);
    },
  );

  test('listening on a socket path outside fsWrite is refused; abstract sockets are refused', async () => {
    const run = await runner({ net: true });
    expect(
      await run(
        `require('node:net').createServer().listen(${JSON.stringify(join(outside, 'planted.sock'))}); return 'listening'`,
      ),
    ).toMatch(/ERR_ACCESS_DENIED/);
    expect(existsSync(join(outside, 'planted.sock'))).toBe(false);
    expect(await run(connectTo('\0toolpool-abstract-probe'))).toMatch(/^error ERR_ACCESS_DENIED.*abstract/);
  });

  test.skipIf(major >= 25)(
    'a socket file inside fsWrite is reached (Node before 25; 25+ also needs permissions.net)',
    async () => {
      const path = join(writeRoot, 'own.sock');
      const seen = await socketAt(path);
      const run = await runner();
      expect(await run(connectTo(path))).toBe('connected');
      // The host may read the call's result before it accepts the connection the child already made.
      expect(
        await eventually(
          () => seen.connections,
          (count) => count === 1,
          10_000,
        ),
      ).toBe(1);
    },
  );
});

describe('links (what the permission model already refuses, kept as attacks)', () => {
  test.each([
    ['fs.symlink to a file outside', `require('node:fs').symlinkSync(%o, %w); return 'linked'`],
    ['fs.symlink, relative target', `require('node:fs').symlinkSync('../outside/secret.txt', %w); return 'linked'`],
    ['fs.promises.symlink', `await require('node:fs/promises').symlink(%o, %w); return 'linked'`],
    ['fs.link (a hard link) to a file outside', `require('node:fs').linkSync(%o, %w); return 'linked'`],
    ['fs.rename of a file outside into fsWrite', `require('node:fs').renameSync(%o, %w); return 'renamed'`],
    ['fs.cp of a file outside into fsWrite', `require('node:fs').cpSync(%o, %w); return 'copied'`],
  ])('%s is refused', async (_what, template) => {
    const target = join(writeRoot, `planted-${_what.replace(/\W/g, '')}`);
    const run = await runner();
    const answer = await run(
      template.replace('%o', JSON.stringify(join(outside, 'secret.txt'))).replace('%w', JSON.stringify(target)),
    );
    expect(answer).toMatch(/^error: ERR_ACCESS_DENIED/);
    expect(existsSync(target)).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  test('a link made inside fsWrite to a file inside fsWrite, then renamed, still reads nothing outside', async () => {
    writeFileSync(join(writeRoot, 'inside.txt'), 'inside\n');
    const run = await runner();
    const answer = await run(`const fs = require('node:fs');
      try { fs.symlinkSync(${JSON.stringify(join(writeRoot, 'inside.txt'))}, ${JSON.stringify(join(writeRoot, 'l'))}); } catch (e) { return 'error: ' + e.code; }
      fs.renameSync(${JSON.stringify(join(writeRoot, 'l'))}, ${JSON.stringify(join(writeRoot, 'l2'))});
      return fs.readFileSync(${JSON.stringify(join(writeRoot, 'l2'))}, 'utf8');`);
    // Node refuses symlink unless it may read and write everything; either way nothing outside is reached.
    expect(['error: ERR_ACCESS_DENIED', 'inside\n']).toContain(answer);
  });
});
