import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { remoteRunner } from '../../src/adapters/bullmq/index.ts';
import {
  createExecutor,
  type Executor,
  type ExecutorOptions,
  type ToolCall,
  type ToolEvent,
  type ToolLimits,
} from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { childrenOf, cpuDuring, exited, isAlive } from '../support/mcp-serve.ts';
import { remoteTool, startMachine } from '../support/queue-machines.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

// Stopping work where it runs: timeouts and aborts reach the worker machine
// running the call, a machine that dies is reported (and its call never
// runs again), and `toolpool worker` stops cleanly on SIGTERM.

const LOST_AFTER_MS = 1_000;
let redis: TestRedis;
let direct: Redis;
let folder: string;
let machines: Array<{ pid: number; kill: (signal: NodeJS.Signals) => boolean }>;
/** The host of the "stops" queue; a tool ignoring its signal is killed 200 ms after it. */
let executor: Executor;
const hosts: Executor[] = [];

async function host(
  queue: string,
  options: Partial<ExecutorOptions> = {},
  tools = ['spin.ts', 'wait.ts', 'echo.ts'],
): Promise<Executor> {
  const remote = remoteRunner({ connection: redis.url, queue, lostAfterMs: LOST_AFTER_MS });
  const executor = await createExecutor({ tools: tools.map(remoteTool), ...options, remote });
  hosts.push(executor);
  return executor;
}

/** Runs one call; resolves with its result and the pid its first update named (the machine, in the worker tier). */
async function runUntilSettled(
  executor: Executor,
  toolCall: ToolCall,
  onStarted?: (pid: number) => void,
  signal?: AbortSignal,
  limits?: ToolLimits,
) {
  let pid: number | undefined;
  const onEvent = (event: ToolEvent) => {
    if (event.type !== 'tool_update' || pid !== undefined) return;
    pid = (event.partial.details as { pid: number }).pid;
    onStarted?.(pid);
  };
  const batch = await executor.executeBatch([toolCall], {
    onEvent,
    ...(signal ? { signal } : {}),
    ...(limits ? { limits } : {}),
  });
  return { result: batch.results[0]!, pid };
}

const lines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean);

/** Polls `read` until `check` holds (or 5 s passed); resolves with its last value. */
async function waitFor<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const end = Date.now() + 5_000;
  let value = await read();
  while (!check(value) && Date.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
  return value;
}

beforeAll(async () => {
  redis = await startRedis();
  direct = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  folder = await mkdtemp(join(tmpdir(), 'toolpool-stops-'));
  const [started, shared] = await Promise.all([
    Promise.all([0, 1].map(() => startMachine(redis.url, 'stops', { args: ['--concurrency', '1'] }))),
    host('stops', { limits: { abortGraceMs: 200 } }),
  ]);
  executor = shared;
  machines = started.map((child) => ({ pid: child.pid!, kill: (signal) => child.kill(signal) }));
}, 150_000); // two worker machines start at once: under load one start alone took over 20 s

afterAll(async () => {
  await Promise.all(hosts.map((executor) => executor.close()));
  direct?.disconnect();
  await redis?.stop();
  await rm(folder, { recursive: true, force: true });
});

describe('toolpool/bullmq: stopping work where it runs', () => {
  test('a timeout kills a busy loop on the worker machine: its CPU is released and it serves the next call', async () => {
    const { result, pid } = await runUntilSettled(executor, call('t', 'spin', {}), undefined, undefined, {
      timeoutMs: 500,
    });
    expect(textOf(result)).toBe(
      'Tool timed out after 500 ms (limit timeoutMs); it ignored its signal and was killed after the grace period.',
    );
    expect(machines.map((machine) => machine.pid)).toContain(pid);
    // After the replacement worker started (its start costs CPU of its own), a loop still running would burn ~0.6 s.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await cpuDuring(pid!, 600)).toBeLessThan(0.25);
    const next = await executor.executeBatch(['a', 'b', 'c'].map((id) => call(id, 'echo', { text: id })));
    expect(next.results.every((message) => !message.isError)).toBe(true);
  });

  test('an aborted batch stops the call on the worker machine (killed after the grace period); its CPU is released', async () => {
    const controller = new AbortController();
    const { result, pid } = await runUntilSettled(
      executor,
      call('a', 'spin', {}),
      () => controller.abort(),
      controller.signal,
    );
    expect(textOf(result)).toBe(
      'Tool call aborted: the tool ignored its signal and was killed after the grace period.',
    );
    // After the replacement worker started (its start costs CPU of its own), a loop still running would burn ~0.6 s.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await cpuDuring(pid!, 600)).toBeLessThan(0.25);
  });

  test('an aborted call still waiting in the queue is taken off it and never runs', async () => {
    const busyLog = join(folder, 'busy.log');
    const queuedLog = join(folder, 'queued.log');
    const busy = new AbortController();
    // One call per machine (each runs one at a time) keeps both busy...
    const running = executor.executeBatch(
      ['b1', 'b2'].map((id) => call(id, 'wait', { ms: 20_000, log: busyLog })),
      { signal: busy.signal },
    );
    expect(
      await waitFor(
        () => lines(busyLog),
        (started) => started.length === 2,
      ),
    ).toHaveLength(2);
    // ...so this one waits in the queue.
    const controller = new AbortController();
    const queued = executor.executeBatch([call('q', 'wait', { ms: 1, log: queuedLog })], { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    expect(textOf((await queued).results[0]!)).toBe('Tool call aborted before it started.');
    busy.abort();
    expect((await running).results.every((message) => message.isError)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await lines(queuedLog)).toEqual([]);
  });

  test('a worker machine SIGKILLed mid-call gives that call an error within lostAfterMs + a few s; it never runs again; later calls go to the others', async () => {
    const log = join(folder, 'killed.log');
    let killedAt = 0;
    const settled = runUntilSettled(executor, call('k', 'wait', { ms: 30_000, log }));
    const [runner] = await waitFor(
      () => lines(log),
      (started) => started.length === 1,
    );
    const [jobId] = await direct.lrange('bull:stops:active', 0, -1);
    const victim = machines.find((machine) => machine.pid === Number(runner));
    expect(
      victim,
      `the call ran in process ${runner}; machines: ${machines.map((machine) => machine.pid)}`,
    ).toBeDefined();
    victim!.kill('SIGKILL');
    killedAt = Date.now();
    const { result } = await settled;
    expect(Date.now() - killedAt).toBeLessThan(LOST_AFTER_MS + 3_000);
    expect(textOf(result)).toMatch(
      /the worker machine running it stopped answering \(no heartbeat for 1000 ms, lostAfterMs; BullMQ queue "stops"\)\. It was not finished and will not be run again\./,
    );

    // BullMQ's way back for such a job: once its lock is gone, a worker's stall check puts it back in the queue (a plain
    // BullMQ worker's default). A surviving machine takes it and refuses to run it a second time.
    // (The survivors' own stall checks, every 30 s, hold the queue's check key; it goes too, so this check runs now.)
    await direct.del(`bull:stops:${jobId}:lock`, 'bull:stops:stalled-check');
    const checker = new Worker('stops', null, {
      connection: direct,
      autorun: false,
      stalledInterval: 100,
      maxStalledCount: 1,
    });
    checker.on('error', () => undefined);
    void checker.startStalledCheckTimer();
    const answerOf = async () => {
      const entries = (await direct.xrange('bull:stops:events', '-', '+')) as Array<[string, string[]]>;
      const completed = entries
        .map(([, fields]) => fields)
        .find((fields) => fields[1] === 'completed' && fields[3] === jobId);
      return completed ? completed[completed.indexOf('returnvalue') + 1] : undefined;
    };
    const text = await waitFor(answerOf, (answer) => answer !== undefined);
    await checker.close(true);
    expect(text).toMatch(/Not run again: this call already started once/);
    expect(await lines(log)).toHaveLength(1);

    const later = await executor.executeBatch(['x', 'y', 'z', 'w'].map((id) => call(id, 'echo', { text: id })));
    expect(later.results.every((message) => !message.isError)).toBe(true);
    const survivors = machines.filter((machine) => machine !== victim).map((machine) => machine.pid);
    for (const message of later.results) expect(survivors).toContain((message.details as { pid: number }).pid);
  });
});

describe('toolpool worker: SIGTERM', () => {
  test('stops a busy call (not waiting for it), answers it with an error, exits 0 and leaves no child process', async () => {
    const machine = await startMachine(redis.url, 'term', { args: ['--isolation', 'process'] });
    const termHost = await host('term', { isolation: 'process', limits: { abortGraceMs: 200 } }, ['spin.ts']);
    let children: number[] = [];
    let signalledAt = 0;
    const { result } = await runUntilSettled(termHost, call('s', 'spin', {}), () => {
      children = childrenOf(machine.pid!);
      signalledAt = Date.now();
      machine.kill('SIGTERM');
    });
    const { code } = await exited(machine);
    expect(code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    expect(children.length).toBeGreaterThan(0);
    for (const pid of children) expect(isAlive(pid)).toBe(false);
    expect(textOf(result)).toMatch(
      /^Tool call stopped: the worker machine running it was shut down \(Tool call aborted: the tool ignored its signal and was killed after the grace period\.\)/,
    );
    expect(machine.stderrText).toMatch(/stopping: SIGTERM/);
  }, 120_000); // starts a worker machine: under load a start alone took over 20 s
});
