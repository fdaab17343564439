import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisLedger, remoteRunner } from '../../src/adapters/bullmq/index.ts';
import { createExecutor, defineTool } from '../../src/index.ts';
import { call, textOf } from '../support/executors.ts';
import { ledgerCases } from '../support/ledger-cases.ts';
import { remoteTool, startMachine } from '../support/queue-machines.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

// redisLedger across host processes, against a real redis-server of this file's own.
let redis: TestRedis;
let prefix = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis?.stop());

describe('redisLedger', () => {
  ledgerCases(
    () => `redis:${redis.url}`,
    (spec) => redisLedger({ connection: spec.slice('redis:'.length) }),
  );

  test('an unreachable Redis runs nothing: the error names the ledger and why', async () => {
    const runs: string[] = [];
    const tool = defineTool({
      name: 'pay',
      description: 'Pay',
      parameters: Type.Object({}),
      execute: () => {
        runs.push('ran');
        return { content: [{ type: 'text', text: 'paid' }] };
      },
    });
    const ledger = redisLedger({ connection: 'redis://127.0.0.1:1', connectTimeoutMs: 500 });
    const executor = await createExecutor({ tools: [tool], ledger });
    try {
      const batch = await executor.executeBatch([call('c1', 'pay')], { runId: `r-${++prefix}` });
      expect(runs).toEqual([]);
      expect(textOf(batch.results[0]!)).toMatch(
        /^Not run: the call could not be recorded in the ledger redisLedger\(redis:\/\/127\.0\.0\.1:1\) \(Redis at redis:\/\/127\.0\.0\.1:1 is unreachable \(.*ECONNREFUSED.*\)\)\. A call that is not recorded could run twice, so it was not run\./,
      );
    } finally {
      await executor.close();
      await ledger.close?.();
    }
  });

  test('a record expires after expireAfterMs: the key is then new', async () => {
    const runs: string[] = [];
    const tool = defineTool({
      name: 'pay',
      description: 'Pay',
      parameters: Type.Object({}),
      execute: () => {
        runs.push('ran');
        return { content: [{ type: 'text', text: 'paid' }] };
      },
    });
    const ledger = redisLedger({ connection: redis.url, expireAfterMs: 1_000, prefix: 'expiry-test' });
    const executor = await createExecutor({ tools: [tool], ledger });
    try {
      const runId = `r-${++prefix}`;
      await executor.executeBatch([call('c1', 'pay')], { runId });
      await executor.executeBatch([call('c1', 'pay')], { runId });
      expect(runs).toEqual(['ran']);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await executor.executeBatch([call('c1', 'pay')], { runId });
      expect(runs).toEqual(['ran', 'ran']);
    } finally {
      await executor.close();
      await ledger.close?.();
    }
  });

  test('a remote call the host sent and lost (its machine SIGKILLed) stays "started, never ended": a retried batch does not send it again', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'toolpool-lost-'));
    const machine = await startMachine(redis.url, 'ledger-lost');
    const ledger = redisLedger({ connection: redis.url });
    const executor = await createExecutor({
      tools: [remoteTool('wait.ts')],
      remote: remoteRunner({ connection: redis.url, queue: 'ledger-lost', lostAfterMs: 1_000 }),
      ledger,
    });
    try {
      const log = join(folder, 'wait.log');
      const runId = `r-${++prefix}`;
      const calls = [call('w', 'wait', { ms: 60_000, log })];
      const first = executor.executeBatch(calls, { runId });
      while (!existsSync(log)) await new Promise((resolve) => setTimeout(resolve, 20));
      machine.kill('SIGKILL');
      expect(textOf((await first).results[0]!)).toMatch(/the worker machine running it stopped answering/);
      const retry = await executor.executeBatch(calls, { runId });
      expect(textOf(retry.results[0]!)).toMatch(
        /^Not run again: this call of "wait" \(run "r-\d+", call "w"\) started at .* it may already have run/,
      );
      expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    } finally {
      await executor.close();
      await ledger.close?.();
      await rm(folder, { recursive: true, force: true });
    }
  }, 120_000); // starts a worker machine: under load a start alone took over 20 s
});
