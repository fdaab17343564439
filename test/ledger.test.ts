import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterAll, describe, expect, test } from 'vitest';
import {
  Agent,
  defineTool,
  memoryLedger,
  scriptedModel,
  type Ledger,
  type LedgerRecord,
  type ToolEndEvent,
} from '../src/index.ts';
import { folderLedger } from '../src/examples/ledger.examples.ts';
import { call, fixture, recordEvents, textOf, useExecutors } from './support/executors.ts';

// The ledger in one process: a keyed call runs at most once (issue 25), and
// an approval is spent once (issue 31, item 4). Across processes (SQLite,
// Redis) see ledger-sqlite.test.ts and adapters/bullmq-ledger.test.ts.

const createExecutor = useExecutors();
const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** An inline payment that counts its runs; over 100 it needs a person's approval. */
function payTool(runs: string[], annotations?: { idempotentHint?: boolean }) {
  return defineTool({
    name: 'pay',
    description: 'Pay an amount',
    parameters: Type.Object({ amount: Type.Number(), to: Type.String() }),
    needsApproval: ({ amount }) => amount > 100,
    ...(annotations ? { annotations } : {}),
    execute: ({ amount, to }, ctx) => {
      runs.push(`${ctx.runId}:${ctx.callId}:${amount}:${to}`);
      return { content: [{ type: 'text', text: `paid ${amount} to ${to}` }], details: { amount } };
    },
  });
}

const endOf = (events: { type: string }[], id: string) =>
  events.find((event) => event.type === 'tool_end' && (event as ToolEndEvent).toolCallId === id) as ToolEndEvent;

/** A ledger that holds a record the test wrote, as another host would have. */
function ledgerWith(record: LedgerRecord): Ledger {
  const ledger = memoryLedger();
  return {
    ...ledger,
    name: 'test ledger',
    claim: async (key, start) => (key.callId === 'c1' ? record : ledger.claim(key, start)),
  };
}

describe('ledger: a keyed call runs at most once', () => {
  test('a call whose key ended gets its recorded result without running, and tool_end says it was replayed', async () => {
    const runs: string[] = [];
    const executor = await createExecutor({ tools: [payTool(runs)] });
    const events = recordEvents(executor);
    const first = await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    const second = await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    expect(runs).toEqual(['r1:c1:5:ann']);
    expect(second.results[0]).toMatchObject({
      isError: false,
      content: first.results[0]!.content,
      details: { amount: 5 },
    });
    const ends = events.filter((event): event is ToolEndEvent => event.type === 'tool_end');
    expect(ends.map((event) => event.replayed)).toEqual([undefined, true]);
    // Another run id, or none: another call.
    await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r2' });
    await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })]);
    await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })]);
    expect(runs).toEqual(['r1:c1:5:ann', 'r2:c1:5:ann', 'undefined:c1:5:ann', 'undefined:c1:5:ann']);
  });

  test('a key that started and never ended is not run: the error says it may have run, when and where; an idempotent tool runs again', async () => {
    const startedAt = Date.parse('2026-01-02T03:04:05.000Z');
    const record = { toolName: 'pay', argsDigest: '', startedAt, startedBy: 'host-a:1234' };
    const runs: string[] = [];
    // The digest of the arguments the call will have: take it from a first, unkeyed look.
    const { argsDigest } = await import('../src/core/ledger.ts');
    record.argsDigest = argsDigest({ amount: 5, to: 'ann' });
    const executor = await createExecutor({ tools: [payTool(runs)], ledger: ledgerWith(record) });
    const batch = await executor.executeBatch([call('c1', 'pay', { amount: '5', to: 'ann' })], { runId: 'r1' });
    expect(runs).toEqual([]);
    expect(batch.results[0]!.isError).toBe(true);
    expect(textOf(batch.results[0]!)).toMatch(
      /^Not run again: this call of "pay" \(run "r1", call "c1"\) started at 2026-01-02T03:04:05\.000Z on host-a:1234 and its end was never recorded: it may already have run .* It was not run again/,
    );

    const idempotent = await createExecutor({
      tools: [payTool(runs, { idempotentHint: true })],
      ledger: ledgerWith(record),
    });
    const again = await idempotent.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    expect(again.results[0]!.isError).toBe(false);
    expect(runs).toEqual(['r1:c1:5:ann']);
  });

  test('a reused call id with other arguments is not the recorded call: not run, and not answered with its result', async () => {
    const runs: string[] = [];
    const executor = await createExecutor({ tools: [payTool(runs)] });
    await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    const other = await executor.executeBatch([call('c1', 'pay', { amount: 7, to: 'bob' })], { runId: 'r1' });
    expect(runs).toEqual(['r1:c1:5:ann']);
    expect(textOf(other.results[0]!)).toMatch(
      /^Not run: the ledger already holds another call under run "r1", call "c1" \(tool "pay" with other arguments, started at/,
    );
  });

  test('a ledger that cannot be reached runs nothing: the error names the ledger and why', async () => {
    const runs: string[] = [];
    const broken: Ledger = {
      name: 'brokenLedger(db.example:5432)',
      claim: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      end: async () => undefined,
      release: async () => undefined,
    };
    const executor = await createExecutor({ tools: [payTool(runs)], ledger: broken });
    const batch = await executor.executeBatch(
      [call('c1', 'pay', { amount: 5, to: 'ann' }), call('c2', 'pay', { amount: 6, to: 'bob' })],
      { runId: 'r1' },
    );
    expect(runs).toEqual([]);
    for (const result of batch.results) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Not run: the call could not be recorded in the ledger brokenLedger\(db\.example:5432\) \(connect ECONNREFUSED\)\. A call that is not recorded could run twice/,
      );
    }
    // Unkeyed batches do not touch the ledger.
    expect((await executor.executeBatch([call('c3', 'pay', { amount: 5, to: 'ann' })])).results[0]!.isError).toBe(
      false,
    );
  });

  test('a result over the bound is recorded as its size and digest; a replay says it ran and that its result was not kept', async () => {
    const runs: string[] = [];
    const big = defineTool({
      name: 'big',
      description: 'A large result',
      parameters: Type.Object({}),
      execute: () => {
        runs.push('big');
        return { content: [{ type: 'text', text: 'x'.repeat(300 * 1024) }] };
      },
    });
    const ledger = memoryLedger();
    const executor = await createExecutor({ tools: [big], ledger });
    await executor.executeBatch([call('b', 'big')], { runId: 'r' });
    const again = await executor.executeBatch([call('b', 'big')], { runId: 'r' });
    expect(runs).toEqual(['big']);
    expect(textOf(again.results[0]!)).toMatch(
      /^Not run again: this call of "big" already ran .* Its result \(\d+ bytes of JSON, sha256 [0-9a-f]{64}\) was larger than the ledger keeps/,
    );
    const record = await ledger.claim(
      { runId: 'r', callId: 'b' },
      { toolName: 'big', argsDigest: '', startedAt: 0, startedBy: '' },
    );
    expect(record?.end?.result).toBeUndefined();
    expect(record?.end?.omitted?.bytes).toBeGreaterThan(300 * 1024);
  });

  test('a module tool in a worker sees ctx.runId and ctx.callId', async () => {
    const executor = await createExecutor({ tools: [fixture('ledger/charge.ts')] });
    const batch = await executor.executeBatch([call('k1', 'charge', { amount: 3 })], { runId: 'run-7' });
    expect(batch.results[0]!.details).toMatchObject({ key: 'run-7:k1' });
    const process = await createExecutor({ tools: [fixture('ledger/charge.ts')], isolation: 'process' });
    const inChild = await process.executeBatch([call('k2', 'charge', { amount: 3 })], { runId: 'run-8' });
    expect(inChild.results[0]!.details).toMatchObject({ key: 'run-8:k2' });
  }, 120_000);

  test('a concurrent batch: each call is claimed before it runs, and a second batch replays them all', async () => {
    const runs: string[] = [];
    const executor = await createExecutor({ tools: [payTool(runs)] });
    const calls = [
      call('a', 'pay', { amount: 1, to: 'a' }),
      call('b', 'pay', { amount: 2, to: 'b' }),
      call('c', 'pay', { amount: 3, to: 'c' }),
    ];
    const first = await executor.executeBatch(calls, { runId: 'r' });
    const second = await executor.executeBatch(calls, { runId: 'r' });
    expect(runs).toHaveLength(3);
    expect(second.results.map(textOf)).toEqual(first.results.map(textOf));
  });

  test('a batch aborted while its claim was written: the call does not run and its claim is released, so a retry runs it', async () => {
    const runs: string[] = [];
    const controller = new AbortController();
    const inner = memoryLedger();
    const ledger: Ledger = {
      ...inner,
      claim: async (key, record) => {
        const claimed = await inner.claim(key, record);
        controller.abort();
        return claimed;
      },
    };
    const executor = await createExecutor({ tools: [payTool(runs)], ledger });
    const aborted = await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], {
      runId: 'r1',
      signal: controller.signal,
    });
    expect(textOf(aborted.results[0]!)).toBe('Tool call aborted before it started.');
    expect(runs).toEqual([]);
    const retry = await executor.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    expect(retry.results[0]!.isError).toBe(false);
    expect(runs).toEqual(['r1:c1:5:ann']);
  });

  test('runId is checked', async () => {
    const executor = await createExecutor({ tools: [payTool([])] });
    await expect(executor.executeBatch([call('a', 'pay', { amount: 1, to: 'a' })], { runId: '' })).rejects.toThrow(
      /runId must be a non-empty string/,
    );
    await expect(createExecutor({ tools: [payTool([])], ledger: {} as never })).rejects.toThrow(/ledger/);
  });

  test('memoryLedger: keys whose parts join to one string stay apart, and a replay the caller changes leaves the record as it was', async () => {
    const ledger = memoryLedger();
    const start = { toolName: 'pay', argsDigest: 'd', startedAt: 1, startedBy: 'here' };
    expect(await ledger.claim({ runId: 'a:b', callId: 'c' }, start)).toBeUndefined();
    expect(await ledger.claim({ runId: 'a', callId: 'b:c' }, start)).toBeUndefined();
    await ledger.end({ runId: 'a', callId: 'b:c' }, { endedAt: 2, isError: false, result: { content: [] } });
    const replay = await ledger.claim({ runId: 'a', callId: 'b:c' }, start);
    replay!.end!.result!.content.push({ type: 'text', text: 'changed by the caller' });
    expect((await ledger.claim({ runId: 'a', callId: 'b:c' }, start))?.end?.result).toEqual({ content: [] });
    expect((await ledger.claim({ runId: 'a:b', callId: 'c' }, start))?.end).toBeUndefined();
  });

  test('the documented custom ledger (a folder of files) keeps a call from running twice across executors', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'toolpool-ledger-'));
    folders.push(folder);
    const runs: string[] = [];
    const one = await createExecutor({ tools: [payTool(runs)], ledger: folderLedger(folder) });
    const two = await createExecutor({ tools: [payTool(runs)], ledger: folderLedger(folder) });
    const first = await one.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    const events = recordEvents(two);
    const second = await two.executeBatch([call('c1', 'pay', { amount: 5, to: 'ann' })], { runId: 'r1' });
    expect(runs).toEqual(['r1:c1:5:ann']);
    expect(textOf(second.results[0]!)).toBe(textOf(first.results[0]!));
    expect(endOf(events, 'c1').replayed).toBe(true);
  });
});

describe('an approval is spent once (issue 31, item 4)', () => {
  const script = () =>
    scriptedModel([
      { text: 'paying', toolCalls: [{ id: 'big', name: 'pay', arguments: { amount: 500, to: 'ann' } }] },
      { text: 'done' },
      { text: 'done again' },
      { text: 'and again' },
    ]);

  for (const secret of [undefined, 'a secret of the host']) {
    test(`a snapshot taken before the approved call ran, restored after it ran, does not run it again (${secret ? 'signed' : 'unsigned'})`, async () => {
      const runs: string[] = [];
      const executor = await createExecutor({ tools: [payTool(runs)] });
      const options = secret ? { snapshotSecret: secret } : {};
      const agent = new Agent({ model: script(), executor, ...options });
      await agent.prompt('pay ann');
      const stored = JSON.stringify(agent.snapshot());
      await agent.resume({ approved: ['big'] });
      expect(runs).toEqual([`${agent.runId}:big:500:ann`]);

      // Replayed from the store: the same run id, so the same key.
      const replayed = new Agent({ model: script(), executor, snapshot: JSON.parse(stored), ...options });
      expect(replayed.runId).toBe(agent.runId);
      const events: ToolEndEvent[] = [];
      replayed.subscribe((event) => void (event.type === 'tool_end' && events.push(event)));
      await replayed.resume({ approved: ['big'] });
      expect(runs).toHaveLength(1);
      expect(events.map((event) => event.replayed)).toEqual([true]);
      // And once more: a second resume of the same stored snapshot.
      const third = new Agent({ model: script(), executor, snapshot: JSON.parse(stored), ...options });
      await third.resume({ approved: ['big'] });
      expect(runs).toHaveLength(1);
    });
  }

  test('a reused call id in a later turn of the same run is not run again', async () => {
    const runs: string[] = [];
    const executor = await createExecutor({ tools: [payTool(runs)] });
    const model = scriptedModel([
      { text: 'one', toolCalls: [{ id: 'same', name: 'pay', arguments: { amount: 5, to: 'ann' } }] },
      { text: 'two', toolCalls: [{ id: 'same', name: 'pay', arguments: { amount: 5, to: 'ann' } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({ model, executor, runId: 'job-1' });
    await agent.prompt('pay');
    expect(runs).toEqual(['job-1:same:5:ann']);
  });

  test('the run id is an option, random by default, and the snapshot carries it', async () => {
    const executor = await createExecutor({ tools: [payTool([])] });
    const model = scriptedModel([]);
    const a = new Agent({ model, executor });
    const b = new Agent({ model, executor });
    expect(a.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.runId).not.toBe(b.runId);
    expect(new Agent({ model, executor, runId: 'mine' }).snapshot().runId).toBe('mine');
    expect(() => new Agent({ model, executor, runId: '' })).toThrow(/runId must be a non-empty string/);
  });
});

describe('memoryLedger({ maxKeys })', () => {
  const start = { toolName: 'pay', argsDigest: 'd', startedAt: 1, startedBy: 'here:1' };
  const key = (callId: string) => ({ runId: 'r', callId });
  /** Whether it holds the key. Asking about a key it does not hold records it (and may evict): ask about those last. */
  const remembers = async (ledger: Ledger, callId: string) => {
    const existing = await ledger.claim(key(callId), start);
    if (existing === undefined) await ledger.release(key(callId));
    return existing !== undefined;
  };

  test('past maxKeys, the key that ended first is forgotten first; a key that started and never ended is never forgotten', async () => {
    const ledger = memoryLedger({ maxKeys: 3 });
    await ledger.claim(key('started'), start); // never ends
    for (const callId of ['a', 'b', 'c', 'd']) await ledger.claim(key(callId), start);
    // End out of claim order: c ended first, so c goes first.
    for (const callId of ['c', 'a', 'd', 'b']) await ledger.end(key(callId), { endedAt: 2, isError: false });
    await ledger.claim(key('e'), start); // over the bound: ended keys go, oldest end first
    expect(await remembers(ledger, 'started')).toBe(true);
    expect(await remembers(ledger, 'b')).toBe(true);
    expect(await remembers(ledger, 'e')).toBe(true);
    expect(await remembers(ledger, 'c')).toBe(false);
    expect(await remembers(ledger, 'a')).toBe(false);
    expect(await remembers(ledger, 'd')).toBe(false);
  });

  test('with every kept key started and none ended, it keeps them all, past the bound', async () => {
    const ledger = memoryLedger({ maxKeys: 2 });
    for (const callId of ['a', 'b', 'c']) await ledger.claim(key(callId), start);
    for (const callId of ['a', 'b', 'c']) expect(await remembers(ledger, callId)).toBe(true);
  });
});
