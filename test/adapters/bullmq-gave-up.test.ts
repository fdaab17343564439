import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, expect, test } from 'vitest';
import { remoteRunner } from '../../src/adapters/bullmq/index.ts';
import { createExecutor } from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { remoteTool, startMachine } from '../support/queue-machines.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

// Issue 26: with an append-only Redis, jobs the host had answered "lost" (Redis away past lostAfterMs) came back
// with Redis and started on a worker machine seconds after the model was told they failed. A worker machine now
// starts a call only while its host's waiting key exists; the host lets it expire when it gives up.

const LOST_AFTER_MS = 1_000;
let redis: TestRedis | undefined;
let plainRedis: TestRedis | undefined;
afterAll(() => Promise.all([redis?.stop(), plainRedis?.stop()]));

test('a call the host answered as lost never starts when an append-only Redis comes back with its job', async () => {
  redis = await startRedis({ appendOnly: true });
  await startMachine(redis.url, 'aof', { args: ['--concurrency', '1'] });
  const log = join(mkdtempSync(join(tmpdir(), 'toolpool-gave-up-')), 'started.log');
  const executor = await createExecutor({
    tools: [remoteTool('echo.ts'), remoteTool('wait.ts')],
    remote: remoteRunner({ connection: redis.url, queue: 'aof', lostAfterMs: LOST_AFTER_MS }),
  });
  try {
    expect(textOf((await executor.executeBatch([call('warm', 'echo', { text: 'x' })])).results[0]!)).toBe('x');
    // One call holds the machine's only slot; the second waits in the queue, in the append-only file.
    const batch = executor.executeBatch([
      call('holder', 'wait', { ms: 3_000 }),
      call('queued', 'wait', { ms: 0, log }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await redis.stop();
    const { results } = await batch;
    expect(results.map((result) => result.isError)).toEqual([true, true]);
    expect(textOf(results[1]!)).toMatch(/Redis at .* became unreachable while the call was out/);
    // Redis comes back with the queued job once the host's key has expired; the machine reconnects and takes it.
    await new Promise((resolve) => setTimeout(resolve, LOST_AFTER_MS));
    await redis.start();
    // The host works again (a new session), and the machine has had time to take the old job by then.
    let again = '';
    for (let attempt = 0; attempt < 20 && again !== 'y'; attempt++) {
      again = textOf((await executor.executeBatch([call(`after${attempt}`, 'echo', { text: 'y' })])).results[0]!);
      if (again !== 'y') await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(again).toBe('y');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '', 'the queued call started after its host gave up').toBe('');
  } finally {
    await executor.close();
  }
}, 120_000); // starts a worker machine: under load a start alone took over 20 s

test('a worker machine asks whether a host waits once a second, not once per job; a closed host ends its key (issue 27)', async () => {
  plainRedis = await startRedis();
  await startMachine(plainRedis.url, 'asks', { args: ['--concurrency', '1'] });
  const executor = await createExecutor({
    tools: [remoteTool('echo.ts')],
    remote: remoteRunner({ connection: plainRedis.url, queue: 'asks', lostAfterMs: 30_000 }),
  });
  const stats = new Redis(plainRedis.url);
  try {
    const started = Date.now();
    for (let i = 0; i < 20; i++)
      expect(textOf((await executor.executeBatch([call(`c${i}`, 'echo', { text: `t${i}` })])).results[0]!)).toBe(
        `t${i}`,
      );
    const seconds = Math.ceil((Date.now() - started) / 1_000);
    const asked = Number(/^cmdstat_pttl:calls=(\d+)/m.exec(await stats.info('commandstats'))?.[1] ?? 0);
    // One PTTL answers for a second of jobs (fewer than 20 questions unless the machine took a second per call).
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(Math.min(20, seconds + 1));
    expect(await stats.keys('toolpool:asks:host:*')).toHaveLength(1);
    await executor.close();
    // Jobs of a closed host that are still queued anywhere find its key gone and do not start.
    expect(await stats.keys('toolpool:asks:host:*')).toEqual([]);
  } finally {
    stats.disconnect();
    await executor.close();
  }
}, 120_000); // starts a worker machine: under load a start alone took over 20 s
