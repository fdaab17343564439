import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { remoteRunner } from '../../src/adapters/bullmq/index.ts';
import { createExecutor, type Executor } from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { remoteTool } from '../support/queue-machines.ts';
import { captureWarnings, restoreWarningsAfterEach } from '../support/warnings.ts';

// A call that cannot be sent because Redis does not answer fails within
// connectTimeoutMs (default 2 s), not lostAfterMs (set far above here, so
// a wait for it would fail these tests), and says where Redis was and what
// to check. Bounds are generous: a loaded machine must not fail them, and
// they stay far below lostAfterMs.

const LOST_AFTER_MS = 60_000;
const BOUND_MS = 15_000;
const tools = [remoteTool('echo.ts')];
const open: Array<{ close(): Promise<void> }> = [];
const servers: Server[] = [];
restoreWarningsAfterEach();

afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A port nothing listens on: one the system handed out and that was closed again. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A port that takes connections and never answers (what a Redis behind a stalled proxy or a half-open firewall looks like from here). */
async function silentPort(): Promise<number> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => void sockets.push(socket.on('error', () => undefined)));
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({
    close: (done?: (error?: Error) => void) => (sockets.forEach((socket) => socket.destroy()), server.close(done)),
  } as Server);
  return (server.address() as { port: number }).port;
}

async function host(url: string, extra: { connectTimeoutMs?: number } = {}): Promise<Executor> {
  const executor = await createExecutor({
    tools,
    remote: remoteRunner({ connection: url, queue: 'unreachable', lostAfterMs: LOST_AFTER_MS, ...extra }),
  });
  open.push(executor);
  return executor;
}

async function timedCall(executor: Executor, id: string) {
  const start = Date.now();
  const { results } = await executor.executeBatch([call(id, 'echo', { text: 'x' })]);
  return { text: textOf(results[0]!), isError: results[0]!.isError, ms: Date.now() - start };
}

describe('toolpool/bullmq: a call that cannot be sent fails fast, not after lostAfterMs', () => {
  test('Redis refusing connections: each call fails within connectTimeoutMs, naming the URL and what to check', async () => {
    const url = `redis://127.0.0.1:${await refusedPort()}`;
    const executor = await host(url);
    for (const id of ['a', 'b']) {
      const { text, isError, ms } = await timedCall(executor, id);
      expect(isError).toBe(true);
      expect(text).toContain(`Not run: Redis at ${url} (BullMQ queue "unreachable") is unreachable (`);
      expect(text).toMatch(/ECONNREFUSED/);
      expect(text).toContain(`Check that redis-server runs at ${url} and that this machine can reach it`);
      expect(ms).toBeLessThan(BOUND_MS);
      console.log(`refused: call ${id} ended after ${ms} ms`);
    }
  });

  test('Redis that takes the connection and never answers: the call fails within connectTimeoutMs, saying nothing answered', async () => {
    const url = `redis://127.0.0.1:${await silentPort()}`;
    const executor = await host(url, { connectTimeoutMs: 500 });
    const { text, isError, ms } = await timedCall(executor, 'a');
    expect(isError).toBe(true);
    expect(text).toContain(
      `Not run: Redis at ${url} (BullMQ queue "unreachable") is unreachable (no answer within 500 ms, connectTimeoutMs)`,
    );
    expect(ms).toBeGreaterThanOrEqual(400);
    console.log(`silent: the call ended after ${ms} ms`);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  test('createExecutor on a dead Redis starts, and warns once naming it; calls then fail fast', async () => {
    const warnings = captureWarnings();
    const url = `redis://127.0.0.1:${await refusedPort()}`;
    const executor = await host(url, { connectTimeoutMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 800));
    await timedCall(executor, 'a');
    await timedCall(executor, 'b');
    const said = warnings.filter((warning) => warning.includes('remoteRunner could not reach Redis'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`Redis at ${url} (BullMQ queue "unreachable") within 300 ms (`);
    expect(said[0]).toContain('Calls of module tools fail fast until it answers.');
  });

  test('connectTimeoutMs is checked', () => {
    expect(() => remoteRunner({ connection: 'redis://h', queue: 'q', connectTimeoutMs: 5 })).toThrow(
      /remoteRunner\(\{ connectTimeoutMs \}\) must be a number of milliseconds >= 100/,
    );
  });
});
