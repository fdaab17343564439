import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { remoteRunner } from '../../src/adapters/bullmq/index.ts';
import { createExecutor, type Executor, type ExecutorOptions, type ToolEvent } from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';
import { machineCopy, remoteTool, startMachine } from '../support/queue-machines.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

// Worker machines are `toolpool worker` processes with their own copies of
// test/fixtures/remote/; the host loads the originals and sends calls
// through a redis-server of this file's own.

let redis: TestRedis;
let machinePids: number[];
let direct: Redis;
/** The host most tests share: its own options are the defaults. */
let main: Executor;
const hosts: Executor[] = [];

/** A host on `queue`; it loads only the tools it is given (each module's definition is read in a worker of its own). */
async function host(
  queue: string,
  options: Partial<ExecutorOptions> = {},
  tools = ['echo.ts'].map(remoteTool),
): Promise<Executor> {
  const executor = await createExecutor({
    tools,
    ...options,
    remote: remoteRunner({ connection: redis.url, queue, lostAfterMs: 1_000 }),
  });
  hosts.push(executor);
  return executor;
}

beforeAll(async () => {
  redis = await startRedis();
  direct = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
  const edited = (name: string, text: string) => (name === 'echo.ts' ? `${text}\n// another version\n` : text);
  // Two machines with the tools as the host has them; a third with another version of echo.ts, a tighter timeout and the process tier.
  const [machines, shared] = await Promise.all([
    Promise.all([
      startMachine(redis.url, 'tools', { args: ['--concurrency', '2'] }),
      startMachine(redis.url, 'tools', { args: ['--concurrency', '2'] }),
      machineCopy(edited).then((tools) =>
        startMachine(redis.url, 'other', { tools, args: ['--timeout', '400', '--isolation', 'process'] }),
      ),
    ]),
    host('tools', {}, ['echo.ts', 'wait.ts', 'progress.ts', 'prepared.ts'].map(remoteTool)),
  ]);
  main = shared;
  machinePids = machines.slice(0, 2).map((child) => child.pid!);
}, 150_000); // three worker machines start at once: under load one start alone took over 20 s

afterAll(async () => {
  await Promise.all(hosts.map((executor) => executor.close()));
  direct?.disconnect();
  await redis?.stop();
});

describe('toolpool/bullmq: calls on worker machines', () => {
  test('a call runs on a worker machine, with the arguments the host validated and coerced; both machines take calls', async () => {
    const executor = main;
    const one = await executor.executeBatch([call('c1', 'echo', { text: 'ab', times: '2' })]);
    expect(one.results[0]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'abab' }] });
    expect(machinePids).toContain((one.results[0]!.details as { pid: number }).pid);
    // Four calls of 300 ms at once, two per machine at most: each machine runs some.
    const batch = await executor.executeBatch(['a', 'b', 'c', 'd'].map((id) => call(id, 'wait', { ms: 300 })));
    const pids = new Set(batch.results.map((result) => (result.details as { pid: number }).pid));
    expect(batch.results.every((result) => !result.isError)).toBe(true);
    expect([...pids].sort()).toEqual([...machinePids].sort());
  });

  test('every update arrives as a tool_update, in order, before tool_end; prepareArguments ran once, on the host', async () => {
    const events: ToolEvent[] = [];
    const batch = await main.executeBatch([call('p', 'progress', { count: 50 }), call('q', 'prepared', {})], {
      onEvent: (event) => void events.push(event),
    });
    expect(batch.results.map(textOf)).toEqual(['sent 50', 'prepared 1 time(s)']);
    const ofP = events
      .filter((event) => event.toolCallId === 'p')
      .map((event) => (event.type === 'tool_update' ? (event.partial.details as { i: number }).i : event.type));
    expect(ofP).toEqual(['tool_start', ...Array.from({ length: 50 }, (_, i) => i + 1), 'tool_end']);
    const end = events.find((event) => event.type === 'tool_end' && event.toolCallId === 'p');
    expect(end).toMatchObject({ isError: false, runningMs: expect.any(Number), queuedMs: expect.any(Number) });
  });

  test('a call that runs quietly for longer than lostAfterMs is not taken for lost: its machine sends heartbeats', async () => {
    const result = (await main.executeBatch([call('quiet', 'wait', { ms: 2_500 })])).results[0]!;
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'waited 2500 ms' }] });
  });

  test('a call refused on the host never reaches the queue', async () => {
    const executor = await host('tools', {
      beforeToolCall: ({ toolCall }) => (toolCall.id === 'blocked' ? { block: true, reason: 'no' } : undefined),
    });
    const before = await direct.xlen('bull:tools:events');
    const batch = await executor.executeBatch([
      call('bad', 'echo', { text: 'x', times: 9 }),
      call('blocked', 'echo', { text: 'x' }),
      call('gone', 'nope', {}),
    ]);
    expect(batch.results.map((result) => result.isError)).toEqual([true, true, true]);
    expect(textOf(batch.results[0]!)).toMatch(/Validation failed for tool "echo"/);
    expect(await direct.xlen('bull:tools:events')).toBe(before);
  });

  test('a worker machine validates what it takes from the queue again: a job written to Redis directly is refused', async () => {
    const { moduleHash } = main.metadata.get('echo')!;
    const queue = new Queue('tools', { connection: direct });
    const events = new QueueEvents('tools', { connection: { host: '127.0.0.1', port: redis.port } });
    await events.waitUntilReady();
    const limits = { timeoutMs: 1_000, maxMemoryMb: 64, maxResultBytes: 1_000, abortGraceMs: 100 };
    const data = {
      toolpool: 1,
      callId: 'raw',
      tool: 'echo',
      args: { text: 'x'.repeat(500) },
      limits,
      isolation: 'worker',
      moduleHash,
      heartbeatMs: 500,
    };
    try {
      const invalid = await (await queue.add('echo', data)).waitUntilFinished(events, 10_000);
      expect(invalid).toMatchObject({
        toolpool: 1,
        ok: false,
        error: expect.stringMatching(/Validation failed for tool "echo"/),
      });
      const junk = await (await queue.add('echo', { hello: 'world' })).waitUntilFinished(events, 10_000);
      expect(junk).toMatchObject({ ok: false, error: expect.stringMatching(/not a toolpool call/) });
    } finally {
      await events.close();
      await queue.close();
    }
  });

  test('a tool the worker machines do not have, and a module whose copy differs by content, are error results', async () => {
    const missing = await host('tools', {}, [fixture('remote-host-only.ts')]);
    const result = (await missing.executeBatch([call('m', 'host_only', {})])).results[0]!;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /this worker machine has no tool "host_only" \(it has: echo, prepared, progress, spin, wait\)/,
    );
    const edited = await host('other', {}, ['echo.ts', 'wait.ts'].map(remoteTool));
    const differs = (await edited.executeBatch([call('e', 'echo', { text: 'x' })])).results[0]!;
    expect(differs.isError).toBe(true);
    expect(textOf(differs)).toMatch(
      /the versions differ: this worker machine's copy of tool "echo" is not the module the host has/,
    );
    // The same module elsewhere (another copy, another path) is the same version: the other tools of that machine run.
    expect((await edited.executeBatch([call('w', 'wait', { ms: 1 })])).results[0]!.isError).toBe(false);
  });

  test("the host's limits travel with each call, and the tighter of the host's and the machine's applies", async () => {
    const strict = await host(
      'tools',
      { limits: { timeoutMs: 300, maxResultBytes: 200 } },
      ['echo.ts', 'wait.ts'].map(remoteTool),
    );
    const [slow, big] = (
      await strict.executeBatch([
        call('s', 'wait', { ms: 5_000 }),
        call('b', 'echo', { text: 'y'.repeat(100), times: 3 }),
      ])
    ).results;
    expect(textOf(slow!)).toMatch(/timed out after 300 ms/);
    expect(textOf(big!)).toMatch(/over the limit maxResultBytes \(200 bytes\)/);
    // The third machine has --timeout 400; a host allowing 30 s gets the machine's 400 ms.
    const loose = await host('other', { isolation: 'process' }, [remoteTool('wait.ts')]);
    expect(textOf((await loose.executeBatch([call('l', 'wait', { ms: 5_000 })])).results[0]!)).toMatch(
      /timed out after 400 ms/,
    );
  });

  test("the host's isolation is a floor: a machine that would run the tool in a weaker tier refuses the call", async () => {
    const executor = await host('tools', { isolation: 'process' });
    expect(executor.metadata.get('echo')).toMatchObject({ isolation: 'process' });
    const result = (await executor.executeBatch([call('i', 'echo', { text: 'x' })])).results[0]!;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /tool "echo" must run in the "process" tier or a stronger one .* this worker machine runs it in the "worker" tier/,
    );
  });
});

describe('toolpool/bullmq: a worker that is not toolpool answering', () => {
  let plain: Worker;
  let plainClient: Redis;
  let executor: Executor;
  beforeAll(async () => {
    executor = await host('plain', { limits: { maxResultBytes: 100_000 } }, [remoteTool('echo.ts')]);
    plainClient = new Redis(redis.port, '127.0.0.1', { maxRetriesPerRequest: null });
    // A plain BullMQ worker on a queue of its own: each tool call's text says what it answers with.
    plain = new Worker(
      'plain',
      async (job) => {
        const how = (job.data as { args: { text: string } }).args.text;
        if (how === 'number') return 42;
        if (how === 'shape') return { toolpool: 1, ok: true, result: { content: 'not parts' } };
        if (how === 'huge')
          return { toolpool: 1, ok: true, result: { content: [{ type: 'text', text: 'z'.repeat(300_000) }] } };
        if (how === 'progress') await job.updateProgress(7);
        if (how === 'throw') throw new Error('x'.repeat(20_000));
        return undefined;
      },
      { connection: plainClient },
    );
    plain.on('error', () => undefined);
  });
  afterAll(async () => {
    await plain.close(true);
    plainClient.disconnect();
  });

  test.each([
    ['number', /not a toolpool answer \(it returned 42\)/],
    ['shape', /invalid result: "content" must be an array/],
    ['huge', /over the limit maxResultBytes \(100000 bytes\)/],
    ['progress', /not a toolpool answer \(it reported progress 7\)/],
    ['throw', /its BullMQ job failed on queue "plain" \(x+… \(20000 chars\)\)/],
  ])('a worker answering with %s gives a bounded error result', async (how, message) => {
    const result = (await executor.executeBatch([call('j', 'echo', { text: how })])).results[0]!;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result).length).toBeLessThan(5_000);
  });
});
