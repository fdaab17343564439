/**
 * The sandbox tier as a tier: the clear error without bubblewrap, a child
 * reused across calls and respawned after it dies, host functions, granted
 * folders, per-tool sandboxing.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import type { ChildLauncher } from '../src/isolation/process/child-launcher.ts';
import { ProcessTier } from '../src/isolation/process/process-tier.ts';
import { Tiers } from '../src/isolation/tiers.ts';
import { checkSandboxSupport } from '../src/isolation/sandbox/bwrap-support.ts';
import { SandboxLauncher } from '../src/isolation/sandbox/sandbox-launcher.ts';
import { spacePath } from '../src/isolation/sandbox/fs-write-spaces.ts';
import { DEFAULT_LIMITS } from '../src/core/limits.ts';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';
import type { RunOutcome } from '../src/core/runner.ts';
import { createExecutor as create } from '../src/index.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';
import { childPids, eventually, processesWith } from './support/leaks.ts';

const createExecutor = useExecutors();
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-sandbox-tier-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('without a working bubblewrap', () => {
  const path = process.env.PATH;
  afterEach(() => void (process.env.PATH = path));

  test('bwrap missing from PATH: createExecutor rejects naming bubblewrap, how to install it and the tier to use meanwhile', async () => {
    process.env.PATH = join(scratch, 'no-such-dir');
    const expected =
      /needs bubblewrap \(the bwrap command\), which was not found on PATH.*apt-get install bubblewrap.*isolation: "process" meanwhile/;
    await expect(create({ tools: [fixture('probe.ts')], isolation: 'sandbox' })).rejects.toThrow(expected);
    await expect(create({ tools: [], isolation: 'sandbox' })).rejects.toThrow(expected);
    // A tool that asks for the sandbox itself, in an executor of another tier.
    await expect(create({ tools: [fixture('hostile/sandbox-bystander.ts')] })).rejects.toThrow(expected);
  });

  test('a bwrap the kernel refuses (no user namespaces): createExecutor rejects with what bwrap said and what to check', async () => {
    const bin = mkdtempSync(join(scratch, 'bin-'));
    writeFileSync(join(bin, 'bwrap'), '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
    chmodSync(join(bin, 'bwrap'), 0o755);
    process.env.PATH = bin;
    await expect(create({ tools: [fixture('probe.ts')], isolation: 'sandbox' })).rejects.toThrow(
      /could not create a sandbox \(bwrap: setting up uid map: Permission denied\)\. The kernel may refuse user namespaces.*isolation: "process" meanwhile/,
    );
  });
});

describe('the sandbox child', () => {
  test('is reused across calls and respawned after it dies', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')], isolation: 'sandbox' });
    const ok = async (tag: string) =>
      textOf((await executor.executeBatch([call(tag, 'probe', { action: 'ok', tag })])).results[0]!);
    expect(await ok('one')).toBe('ok one');
    const [first] = childPids();
    expect(await ok('two')).toBe('ok two');
    expect(childPids()).toEqual([first]);
    const { results } = await executor.executeBatch([call('k', 'probe', { action: 'kill-own-process' })]);
    expect(results[0]!.isError).toBe(true);
    expect(await ok('three')).toBe('ok three');
    const [second] = childPids();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
  });

  test('host functions work as in the other tiers', async () => {
    const host = {
      echo: async (value: string) => `host says ${value}`,
      explode: async () => {
        throw new Error('the host refused');
      },
      hang: () => new Promise<never>(() => {}),
    };
    const executor = await createExecutor({
      tools: [fixture('host-user.ts')],
      host,
      isolation: 'sandbox',
      workers: { min: 1, max: 1 },
    });
    const run = async (action: string, value?: string) =>
      textOf(
        (await executor.executeBatch([call('1', 'host_user', value ? { action, value } : { action })])).results[0]!,
      );
    expect(await run('echo', 'hi')).toBe('host says hi');
    expect(await run('fail')).toBe('rejected: the host refused');
    expect(await run('leave-pending')).toBe('returned with a host call pending');
    expect(await run('report')).toBe('Host call hang() cancelled: the tool call ended.');
  });

  test("fsRead is readable, fsWrite writable (and the write lands on the host, in the module's own space), nothing else of the host is there", async () => {
    const readable = mkdtempSync(join(scratch, 'read-'));
    const writable = mkdtempSync(join(scratch, 'write-'));
    // Under a root host the sandbox runs as nobody: the folders it is given must let that user in.
    chmodSync(readable, 0o755);
    chmodSync(writable, 0o777);
    const notGranted = mkdtempSync(join(scratch, 'other-'));
    writeFileSync(join(readable, 'data.txt'), 'granted data');
    writeFileSync(join(notGranted, 'secret.txt'), 'not granted');
    const executor = await createExecutor({
      tools: [fixture('hostile/sandbox-read.ts'), fixture('hostile/sandbox-write.ts')],
      isolation: 'sandbox',
      permissions: { fsRead: [readable], fsWrite: [writable] },
    });
    const { results } = await executor.executeBatch([
      call('r', 'sandbox_read', { target: join(readable, 'data.txt') }),
      call('w', 'sandbox_write', { target: join(writable, 'out.txt') }),
      call('ro', 'sandbox_write', { target: join(readable, 'data.txt') }),
      call('other', 'sandbox_read', { target: join(notGranted, 'secret.txt') }),
    ]);
    expect(textOf(results[0]!)).toBe('read: granted data');
    expect(textOf(results[1]!)).toBe(`wrote ${join(writable, 'out.txt')}`);
    // Each module writes a space of its own, shown to it at the folder's path (see test/sandbox/walls.test.ts).
    const space = spacePath(realpathSync(writable), `module:${realpathSync(fixture('hostile/sandbox-write.ts'))}`);
    expect(readFileSync(join(space, 'out.txt'), 'utf8')).toBe('written by a sandboxed tool');
    expect(existsSync(join(writable, 'out.txt'))).toBe(false);
    expect(textOf(results[2]!)).toMatch(/^failed: (EROFS|ERR_ACCESS_DENIED)$/);
    expect(readFileSync(join(readable, 'data.txt'), 'utf8')).toBe('granted data');
    // Two layers: Node's permission model answers first where the line enforces it; the mount namespace has no such file anyway
    // (shown without permissions in test/hostile/sandbox.test.ts).
    expect(textOf(results[3]!)).toMatch(/^failed: (ENOENT|ERR_ACCESS_DENIED)$/);
  });

  test("its private /tmp is empty and not the host's", async () => {
    const marker = join(tmpdir(), `toolpool-host-tmp-${process.pid}.txt`);
    writeFileSync(marker, 'host tmp');
    try {
      const executor = await createExecutor({
        tools: [fixture('hostile/sandbox-read.ts'), fixture('hostile/sandbox-write.ts')],
        isolation: 'sandbox',
      });
      const inside = join('/tmp', `toolpool-sandbox-only-${process.pid}.txt`);
      const { results } = await executor.executeBatch([
        call('r', 'sandbox_read', { target: marker }),
        call('w', 'sandbox_write', { target: inside }),
      ]);
      expect(textOf(results[0]!)).toBe('failed: ENOENT');
      expect(textOf(results[1]!)).toBe(`wrote ${inside}`);
      expect(existsSync(inside)).toBe(false);
    } finally {
      rmSync(marker, { force: true });
    }
  });

  test('a host whose stderr is a log file: the tool cannot read the log through /proc/self/fd, and what it prints still lands there', () => {
    const log = join(scratch, 'host.log');
    const resultFile = join(scratch, 'result.json');
    writeFileSync(log, 'HOST LOG SECRET\n');
    const fd = openSync(log, 'a');
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', fixture('sandbox-host-with-log.ts'), resultFile], {
        stdio: ['ignore', fd, fd],
        timeout: 60_000,
      });
      expect(run.status).toBe(0);
    } finally {
      closeSync(fd);
    }
    const result = JSON.parse(readFileSync(resultFile, 'utf8')) as { content: { text: string }[] };
    expect(result.content[0]!.text).toBe('fd 1: ENXIO; fd 2: ENXIO');
    expect(readFileSync(log, 'utf8')).toContain('the sandboxed tool says hello');
  });

  test('a host killed with SIGKILL takes its sandbox and every process in it along (--die-with-parent, PID namespace)', async () => {
    const marker = `toolpool-die-with-parent-${process.pid}`;
    const host = spawn(process.execPath, ['--import', 'tsx', fixture('sandbox-host-then-killed.ts'), marker], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const ready = await new Promise<string>((resolve, reject) => {
        let out = '';
        host.stdout!.on('data', (chunk) => (out += chunk) && out.includes('\n') && resolve(out));
        host.once('exit', (code) => reject(new Error(`host exited early (${code}): ${out}`)));
      });
      expect(ready).toMatch(/^ready .*spawned \d+/);
      const orphans = processesWith(marker).filter((pid) => pid !== host.pid);
      expect(orphans).toHaveLength(1);
      // It lives in a PID namespace of its own: its status lists a pid for the host's namespace and one for the sandbox's.
      expect(readFileSync(`/proc/${orphans[0]}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+\d+\s*$/m);
    } finally {
      host.kill('SIGKILL');
    }
    expect(
      await eventually(
        () => processesWith(marker),
        (pids) => pids.length === 0,
      ),
    ).toEqual([]);
  });
});

describe('a hostile child main thread inside the sandbox (as if a tool had taken it over)', () => {
  /** A sandbox tier whose first child runs the process tier's fake child entry (inside bwrap), later ones the real entry. */
  async function tierWithFakeChild(mode: string) {
    const sandbox = new SandboxLauncher(await checkSandboxSupport(), []);
    let launches = 0;
    const launcher: ChildLauncher = {
      name: 'sandbox',
      launch(spec) {
        if (launches++ > 0) return sandbox.launch(spec);
        const fake = fixture('process-tier/fake-child.mjs');
        return sandbox.launch({
          ...spec,
          nodeArgs: [...spec.nodeArgs.slice(0, -1), fake],
          env: { ...spec.env, TOOLPOOL_FAKE_MODE: mode },
        });
      },
    };
    // The options the executor would give its sandbox tier (what the child reads: node_modules, the compile cache, the module).
    const module = await toRunnableModule(fixture('probe.ts'));
    const tiers = new Tiers({
      minWorkers: 1,
      maxWorkers: 1,
      idleTimeoutMs: 5_000,
      loadTimeoutMs: 1_000,
      env: {},
      hostFunctions: {},
      defaultMemoryMb: 64,
      moduleFiles: [module],
    });
    const tier = new ProcessTier(tiers.processOptions(launcher));
    return { tier, launches: () => launches, close: () => tier.close().then(() => sandbox.close()) };
  }
  const limits = { ...DEFAULT_LIMITS, maxMemoryMb: 64, timeoutMs: 500, abortGraceMs: 100, maxResultBytes: 1 << 20 };
  const run = async (tier: ProcessTier): Promise<RunOutcome> => {
    const module = await toRunnableModule(fixture('probe.ts'));
    return tier.execute(
      { callId: 'c', args: { action: 'ok', tag: 'next' }, limits, onUpdate: () => {} },
      { module, source: module },
    );
  };

  test.each([
    ['forge-later', /broke the protocol \(it sent "executed" for request \d+, which is not open\)/],
    ['junk', /broke the protocol \(it sent a message that is not an object\)/],
    ['silent', /did not answer the execute request within \d+ ms, so it was killed/],
  ])(
    '%s: checked on the host like the process tier, the child is replaced, the next call is served',
    async (mode, expected) => {
      const { tier, launches, close } = await tierWithFakeChild(mode);
      try {
        const outcome = await run(tier);
        expect(outcome.ok ? 'no error' : outcome.error).toMatch(expected);
        expect(await run(tier)).toMatchObject({ ok: true, result: { content: [{ type: 'text', text: 'ok next' }] } });
        expect(launches()).toBe(2);
      } finally {
        await close();
      }
    },
  );

  test("even the child's main thread finds no /etc/passwd", async () => {
    const { tier, close } = await tierWithFakeChild('read-passwd');
    try {
      expect(await run(tier)).toMatchObject({
        ok: true,
        result: { content: [{ type: 'text', text: 'denied: ENOENT' }] },
      });
    } finally {
      await close();
    }
  });
});
