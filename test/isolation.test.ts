import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createExecutor as create } from '../src/index.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';
import { childPids, eventually } from './support/leaks.ts';

const createExecutor = useExecutors();
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-isolation-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('limits', () => {
  test("a tool's own limits override the executor's, and a different heap limit gets its own pool", async () => {
    const executor = await createExecutor({
      tools: [fixture('limited-sleeper.ts'), fixture('probe.ts')],
      limits: { timeoutMs: 10_000 },
    });
    const { results } = await executor.executeBatch([
      call('1', 'limited_sleeper', { ms: 10 }),
      call('2', 'limited_sleeper', { ms: 5_000 }),
    ]);
    // The worker's own resource limits: the tool's 64 MB pool, not the default 256 MB one. (V8's
    // heap_size_limit adds a young generation whose size differs per Node line, so it is not compared.)
    expect(results[0]!.details).toEqual({ oldGenerationMb: 64 });
    expect(textOf(results[1]!)).toBe(
      'Tool timed out after 200 ms (limit timeoutMs); it stopped when its signal fired.',
    );
  });

  test('a timeout counts from the moment the tool starts, not from when it was queued', async () => {
    // One worker: the second call waits ~150 ms behind the first, then needs 100 ms of its own 200 ms.
    const executor = await createExecutor({ tools: [fixture('limited-sleeper.ts')], workers: { min: 1, max: 1 } });
    const { results } = await executor.executeBatch([
      call('1', 'limited_sleeper', { ms: 150 }),
      call('2', 'limited_sleeper', { ms: 100 }),
    ]);
    expect(results.map(textOf)).toEqual(['slept 150', 'slept 100']);
  });

  test('a result or an update larger than maxResultBytes fails its call', async () => {
    const executor = await createExecutor({ tools: [fixture('probe.ts')], limits: { maxResultBytes: 200 } });
    const { results } = await executor.executeBatch([
      call('small', 'probe', { action: 'big-update', count: 10 }),
      call('big-update', 'probe', { action: 'big-update', count: 300 }),
      call('big-result', 'probe', { action: 'ok', tag: 'y'.repeat(300) }),
    ]);
    expect(textOf(results[0]!)).toBe('after the big update');
    expect(textOf(results[1]!)).toMatch(/update is \d+ bytes, over the limit maxResultBytes \(200 bytes\)/);
    expect(textOf(results[2]!)).toMatch(/result is \d+ bytes, over the limit maxResultBytes \(200 bytes\)/);
  });
});

describe('progress under pressure', () => {
  test('a flood of 200,000 updates: the last update arrives, in order, before tool_end', async () => {
    const executor = await createExecutor({ tools: [fixture('hostile/update-flood.ts')] });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([call('f', 'update_flood')]);
    expect(textOf(results[0]!)).toBe('flood done');
    const updates = events.filter((e) => e.type === 'tool_update');
    const seen = updates.map((e) => (e.type === 'tool_update' ? (e.partial.details as { i: number }).i : 0));
    expect(seen.at(-1)).toBe(200_000);
    expect(seen).toEqual([...seen].sort((a, b) => a - b)); // in order, none repeated
    expect(new Set(seen).size).toBe(seen.length);
    expect(events.at(-1)!.type).toBe('tool_end');
  });
});

describe('environment', () => {
  test('tools see no host variables by default, the listed ones when allowed, or exact values', async () => {
    process.env.TOOLPOOL_SECRET_TOKEN = 'secret';
    process.env.TOOLPOOL_VISIBLE = 'visible';
    const none = await createExecutor({ tools: [fixture('hostile/read-env.ts')] });
    const listed = await createExecutor({ tools: [fixture('hostile/read-env.ts')], env: ['TOOLPOOL_VISIBLE'] });
    const exact = await createExecutor({ tools: [fixture('hostile/read-env.ts')], env: { TOOLPOOL_VISIBLE: 'given' } });
    const read = async (executor: typeof none, target: string) =>
      textOf((await executor.executeBatch([call('1', 'read_env', { target })])).results[0]!);
    expect(await read(none, 'TOOLPOOL_SECRET_TOKEN')).toBe('(unset)');
    expect(await read(none, 'TOOLPOOL_VISIBLE')).toBe('(unset)');
    expect(await read(listed, 'TOOLPOOL_VISIBLE')).toBe('visible');
    expect(await read(listed, 'TOOLPOOL_SECRET_TOKEN')).toBe('(unset)');
    expect(await read(exact, 'TOOLPOOL_VISIBLE')).toBe('given');
  });
});

describe('permissions', () => {
  test('a tool may read inside fsRead; outside it only through a host function the host grants', async () => {
    const allowed = join(scratch, 'allowed.txt');
    const secret = join(scratch, '..', `toolpool-secret-${process.pid}.txt`);
    writeFileSync(allowed, 'inside');
    writeFileSync(secret, 'the record');
    try {
      const executor = await createExecutor({
        tools: [fixture('hostile/read-file.ts'), fixture('hostile/read-via-host.ts')],
        permissions: { fsRead: [scratch] },
        host: {
          readRecord: async (path: string) =>
            path === secret ? 'the record (granted by the host)' : 'denied by the host',
        },
      });
      const { results } = await executor.executeBatch([
        call('1', 'read_any_file', { target: allowed }),
        call('2', 'read_via_host', { target: secret }),
      ]);
      expect(textOf(results[0]!)).toBe('inside');
      expect(textOf(results[1]!)).toBe('the record (granted by the host)');
      expect(results[1]!.details).toEqual({ direct: 'denied: ERR_ACCESS_DENIED' });
    } finally {
      rmSync(secret, { force: true });
    }
  });

  test('bad permission options are rejected with what to do', async () => {
    await expect(create({ tools: [], permissions: { fsRead: '/tmp' as never } })).rejects.toThrow(
      /permissions.fsRead must be an array of paths/,
    );
    await expect(create({ tools: [], permissions: { read: [] } as never })).rejects.toThrow(
      /unknown option "permissions.read"; the known options of permissions are fsRead, fsWrite/,
    );
    await expect(create({ tools: [], isolation: 'vm' as never })).rejects.toThrow(
      /isolation must be "worker", "process" or "sandbox"/,
    );
    await expect(create({ tools: [], env: 'PATH' as never })).rejects.toThrow(/env must be a list of variable names/);
  });
});

describe('host functions', () => {
  const host = {
    echo: async (value: string) => `host says ${value}`,
    explode: async () => {
      throw new Error('the host refused');
    },
    hang: () => new Promise<never>(() => {}),
  };

  test.each(['worker', 'process'] as const)(
    'in the %s tier: results, thrown errors as rejections, cancellation when the call ends',
    async (isolation) => {
      const executor = await createExecutor({
        tools: [fixture('host-user.ts')],
        host,
        isolation,
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
    },
  );
});

describe('process tier', () => {
  test('runs tools in a child process, relays updates, respawns after the child dies, leaves nothing after close', async () => {
    const executor = await create({ tools: [fixture('probe.ts')], isolation: 'process' });
    const events = recordEvents(executor);
    const first = await executor.executeBatch([
      call('1', 'probe', { action: 'updates', count: 5 }),
      call('2', 'probe', { action: 'where' }),
    ]);
    expect(textOf(first.results[0]!)).toBe('sent 5 updates');
    expect(events.filter((e) => e.type === 'tool_update')).toHaveLength(5);
    const [child] = childPids();
    expect(child).toBeGreaterThan(0);
    expect(first.results[1]!.details).toMatchObject({ isMainThread: false, env: {} });

    const killed = await executor.executeBatch([call('k', 'probe', { action: 'kill-own-process' })]);
    expect(textOf(killed.results[0]!)).toMatch(/isolation process died \(signal SIGKILL\)/);
    const after = await executor.executeBatch([call('3', 'probe', { action: 'ok' })]);
    expect(textOf(after.results[0]!)).toBe('ok');
    expect(childPids()).not.toContain(child);

    await executor.close();
    expect(await eventually(childPids, (pids) => pids.length === 0)).toEqual([]);
  });

  test('permissions apply inside the process tier too', async () => {
    const allowed = join(scratch, 'process-allowed.txt');
    writeFileSync(allowed, 'inside, from the child');
    const executor = await createExecutor({
      tools: [fixture('hostile/read-file.ts')],
      isolation: 'process',
      permissions: { fsRead: [scratch] },
    });
    const { results } = await executor.executeBatch([
      call('1', 'read_any_file', { target: allowed }),
      call('2', 'read_any_file', { target: '/etc/passwd' }),
    ]);
    expect(textOf(results[0]!)).toBe('inside, from the child');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(/ERR_ACCESS_DENIED|Access to this API has been restricted/);
  });

  test('a timeout in the process tier kills the busy tool for real and the child keeps serving', async () => {
    const executor = await createExecutor({
      tools: [fixture('hostile/busy-loop.ts'), fixture('probe.ts')],
      isolation: 'process',
      limits: { timeoutMs: 300, abortGraceMs: 100 },
    });
    const { results } = await executor.executeBatch([call('1', 'busy_loop'), call('2', 'probe', { action: 'ok' })]);
    expect(textOf(results[0]!)).toMatch(/timed out after 300 ms.*killed after the grace period/);
    expect(textOf(results[1]!)).toBe('ok');
    const next = await executor.executeBatch([call('3', 'probe', { action: 'ok', tag: 'again' })]);
    expect(textOf(next.results[0]!)).toBe('ok again');
  });
});
