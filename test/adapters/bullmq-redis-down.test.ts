import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { remoteRunner, serveQueue } from '../../src/adapters/bullmq/index.ts';
import { createExecutor, type Executor } from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { exited, startToolpool } from '../support/mcp-serve.ts';
import { remoteTool, startMachine } from '../support/queue-machines.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

// Redis going away, or never there: every call ends with an error result
// naming the queue and Redis, within a bound, and nothing hangs or crashes.

const LOST_AFTER_MS = 1_000;
const tools = [remoteTool('echo.ts'), remoteTool('wait.ts')];
let redis: TestRedis;
const open: Array<{ close(): Promise<void> }> = [];

async function host(url: string, queue = 'down'): Promise<Executor> {
  const executor = await createExecutor({
    tools,
    remote: remoteRunner({ connection: url, queue, lostAfterMs: LOST_AFTER_MS }),
  });
  open.push(executor);
  return executor;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await run();
  return { value, ms: Date.now() - start };
}

beforeAll(async () => {
  redis = await startRedis();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
  await redis.start().catch(() => undefined);
});
afterAll(() => redis?.stop());

/**
 * Closing with Redis away must not wait for Redis (ioredis would retry for
 * ever): it returns in well under a second on a quiet machine. The bound is
 * generous so that a loaded machine does not fail it; an unbounded close
 * still does.
 */
const CLOSE_BOUND_MS = 10_000;

describe('toolpool/bullmq: Redis unreachable', () => {
  test('a host whose Redis never answers: calls end with an error naming the queue and Redis; close() returns', async () => {
    const executor = await host('redis://127.0.0.1:1', 'nowhere');
    const { value, ms } = await timed(() => executor.executeBatch([call('a', 'echo', { text: 'x' })]));
    expect(ms).toBeLessThan(LOST_AFTER_MS + 3_000);
    expect(textOf(value.results[0]!)).toMatch(
      /^Not run: Redis at redis:\/\/127\.0\.0\.1:1 \(BullMQ queue "nowhere"\) is unreachable \(.*ECONNREFUSED.*\), so the call could not be sent/,
    );
    open.splice(0);
    expect((await timed(() => executor.close())).ms).toBeLessThan(CLOSE_BOUND_MS);
  });

  test('Redis stops while a call runs and before the next: both end with bounded errors, and close() returns', async () => {
    const machine = await startMachine(redis.url, 'down');
    const executor = await host(redis.url);
    expect((await executor.executeBatch([call('ok', 'echo', { text: 'x' })])).results[0]!.isError).toBe(false);
    const running = timed(() => executor.executeBatch([call('w', 'wait', { ms: 20_000 })]));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.stop();
    const { value, ms } = await running;
    expect(ms).toBeLessThan(500 + LOST_AFTER_MS + 3_000);
    expect(textOf(value.results[0]!)).toMatch(
      new RegExp(
        `^Tool call failed: Redis at ${redis.url.replaceAll('/', '\\/')} \\(BullMQ queue "down"\\) became unreachable while the call was out`,
      ),
    );
    const next = await timed(() => executor.executeBatch([call('n', 'echo', { text: 'x' })]));
    expect(next.ms).toBeLessThan(LOST_AFTER_MS + 3_000);
    expect(textOf(next.value.results[0]!)).toMatch(/^Not run: Redis at .* \(BullMQ queue "down"\) is unreachable/);
    // Redis back (empty: it keeps nothing): host and machine reconnect by themselves, and calls run again.
    await redis.start();
    let again = '';
    for (let attempt = 0; attempt < 10 && again !== 'x'; attempt++)
      again = textOf((await executor.executeBatch([call(`r${attempt}`, 'echo', { text: 'x' })])).results[0]!);
    expect(again).toBe('x');
    await redis.stop();
    open.splice(0);
    expect((await timed(() => executor.close())).ms).toBeLessThan(CLOSE_BOUND_MS);
    // The worker machine, Redis still away, stops on SIGTERM and exits 0.
    expect(machine.stderrText).toMatch(
      /toolpool worker: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable \(.*\); reconnecting, calls wait until it is back/,
    );
    expect(machine.stderrText).toMatch(/toolpool worker: Redis at redis:\/\/127\.0\.0\.1:\d+ is back/);
    const stopping = timed(async () => (machine.kill('SIGTERM'), exited(machine)));
    const { value: end, ms: stopMs } = await stopping;
    expect(end.code).toBe(0);
    expect(stopMs).toBeLessThan(6_000);
  }, 120_000); // starts a worker machine: under load a start alone took over 20 s

  test('serveQueue with Redis away: close() returns, and no error escapes', async () => {
    const executor = await createExecutor({ tools });
    open.push(executor);
    const server = serveQueue(executor, { connection: 'redis://127.0.0.1:1', queue: 'nowhere' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await timed(() => server.close())).ms).toBeLessThan(CLOSE_BOUND_MS);
  });

  test('a queue no worker machine serves: the call is taken off the queue and ends with an error saying so', async () => {
    const executor = await host(redis.url, 'unserved');
    const { value, ms } = await timed(() => executor.executeBatch([call('u', 'echo', { text: 'x' })]));
    expect(ms).toBeLessThan(3 * LOST_AFTER_MS + 3_000);
    expect(textOf(value.results[0]!)).toMatch(
      /^Not run: no worker machine served BullMQ queue "unserved" for \d+ ms, so the call was taken off the queue/,
    );
  });
});

describe('toolpool/bullmq: options', () => {
  test.each([
    [{ connection: 'ftp://x', queue: 'q' }, /connection has the scheme ftp:/],
    [{ connection: 'not a url', queue: 'q' }, /connection "not a url" is not a URL/],
    [{ connection: 'redis://h:1/x', queue: 'q' }, /not a database number/],
    [{ connection: { host: 'h', port: 0 }, queue: 'q' }, /connection needs a port from 1 to 65535/],
    [{ connection: { host: 'h', port: 1, pass: 'x' }, queue: 'q' }, /connection has an unknown key "pass"/],
    [
      { connection: 'redis://h', queue: 'a:b' },
      /remoteRunner\(\{ queue \}\) must be a name of 1-200 characters without ":"/,
    ],
    [
      { connection: 'redis://h', queue: 'q', lostAfterMs: 5 },
      /lostAfterMs \}\) must be a number of milliseconds >= 100/,
    ],
  ])('remoteRunner(%j) is refused', (options, message) => {
    expect(() => remoteRunner(options as never)).toThrow(message);
  });

  test('createExecutor refuses a remote that is not a runner, naming the option', async () => {
    await expect(createExecutor({ tools, remote: { execute: 1, close: () => undefined } as never })).rejects.toThrow(
      /option remote\.execute must be a function/,
    );
  });
});

describe('toolpool worker: the command line', () => {
  test.each([
    [['--queue', 'q', '--tools', 'tools'], /missing --redis <url> \(or TOOLPOOL_REDIS_URL\)/],
    [['--redis', 'redis://127.0.0.1:1', '--tools', 'tools'], /missing --queue <name>/],
    [['--redis', 'http://x', '--queue', 'q', '--tools', 'tools'], /connection has the scheme http:/],
    [
      ['--redis', 'redis://127.0.0.1:1', '--queue', 'q', '--tools', 'tools', '--concurrency', '0'],
      /--concurrency must be an integer >= 1/,
    ],
  ])('%j is a usage error (exit 2, one line)', async (args, message) => {
    const child = startToolpool('worker', args);
    const { code } = await exited(child);
    expect(code).toBe(2);
    expect(child.stderrText).toMatch(message);
    expect(child.stderrText.split('\n')[0]).toMatch(/^toolpool: /);
  });

  test('--help lists its flags', async () => {
    const child = startToolpool('worker', ['--help']);
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect((await exited(child)).code).toBe(0);
    expect(stdout).toMatch(
      /Usage: toolpool worker --redis <url> --queue <name> --tools[\s\S]*--concurrency[\s\S]*--isolation/,
    );
  });
});
