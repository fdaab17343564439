import { describe, expect, test } from 'vitest';
import { HostSessions, TRUSTED_FOR_MS } from '../../src/adapters/bullmq/host-sessions.ts';

// A worker machine asks Redis whether a call's host still waits (issue 26: nothing runs after its host gave up).
// It asks once a second per session (issue 27: not a round trip per job), never trusting an answer past the time
// Redis gave, nor past a dropped connection.

/** A Redis whose keys have the PTTLs in `ttls`, clocks the test moves, and the PTTLs asked. */
function fakeRedis(ttls: Record<string, number>) {
  let monotonic = 1_000;
  let wall = 1_700_000_000_000;
  const asked: string[] = [];
  const held: Array<() => void> = [];
  let holding = false;
  const redis = {
    async pttl(key: string) {
      asked.push(key);
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      return ttls[key] ?? -2;
    },
  };
  const sessions = new HostSessions(
    redis,
    (session) => `host:${session}`,
    () => ({ monotonic, wall }),
  );
  return {
    sessions,
    asked,
    advance: (ms: number) => ((monotonic += ms), (wall += ms)),
    /** The machine slept: the wall clock ran on, the monotonic one did not. */
    sleep: (ms: number) => (wall += ms),
    setClockBack: (ms: number) => (wall -= ms),
    /** From now on, answers wait for answerOne(). */
    hold: () => (holding = true),
    /** Resolves once a question waits for its answer. */
    questionOut: async () => {
      while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    },
    answerOne: async () => {
      while (held.length === 0) await new Promise((resolve) => setImmediate(resolve));
      held.shift()!();
    },
    stopHolding: () => (holding = false),
  };
}

describe('HostSessions', () => {
  test('a live session is asked once, then trusted for a second at most, however long its key lives', async () => {
    const redis = fakeRedis({ 'host:a': 10_000 });
    expect(await redis.sessions.waiting('a')).toBe('waits');
    redis.advance(TRUSTED_FOR_MS - 1);
    expect(await redis.sessions.waiting('a')).toBe('waits');
    expect(redis.asked).toEqual(['host:a']);
    redis.advance(1);
    expect(await redis.sessions.waiting('a')).toBe('waits');
    expect(redis.asked).toEqual(['host:a', 'host:a']);
  });

  test('a key with less time left than a second is trusted only for that time', async () => {
    const redis = fakeRedis({ 'host:a': 300 });
    await redis.sessions.waiting('a');
    redis.advance(300);
    await redis.sessions.waiting('a');
    expect(redis.asked).toHaveLength(2);
  });

  test("a machine that slept does not trust what it knew before: the wall clock's time is up", async () => {
    const redis = fakeRedis({ 'host:a': 10_000 });
    await redis.sessions.waiting('a');
    redis.sleep(3_600_000);
    await redis.sessions.waiting('a');
    expect(redis.asked).toEqual(['host:a', 'host:a']);
  });

  test("a wall clock set back does not stretch what is known: the monotonic clock's time is up", async () => {
    const redis = fakeRedis({ 'host:a': 10_000 });
    await redis.sessions.waiting('a');
    redis.setClockBack(60_000);
    redis.advance(TRUSTED_FOR_MS);
    await redis.sessions.waiting('a');
    expect(redis.asked).toEqual(['host:a', 'host:a']);
  });

  test('a dropped connection forgets what was known (Redis may come back from its append-only file)', async () => {
    const redis = fakeRedis({ 'host:a': 10_000 });
    await redis.sessions.waiting('a');
    redis.sessions.forget();
    await redis.sessions.waiting('a');
    expect(redis.asked).toHaveLength(2);
  });

  test('a session whose key is gone is refused, and asked again next time (it is never remembered)', async () => {
    const redis = fakeRedis({});
    expect(await redis.sessions.waiting('gone')).toBe('gave up');
    expect(await redis.sessions.waiting('gone')).toBe('gave up');
    expect(redis.asked).toHaveLength(2);
  });

  test('a key without an expiry waits but is not remembered', async () => {
    const redis = fakeRedis({ 'host:forever': -1 });
    expect(await redis.sessions.waiting('forever')).toBe('waits');
    expect(await redis.sessions.waiting('forever')).toBe('waits');
    expect(redis.asked).toHaveLength(2);
  });

  test('jobs of one session that arrive together share one question', async () => {
    const redis = fakeRedis({ 'host:a': 5_000 });
    redis.hold();
    const answers = [redis.sessions.waiting('a'), redis.sessions.waiting('a'), redis.sessions.waiting('a')];
    await redis.answerOne();
    expect(await Promise.all(answers)).toEqual(['waits', 'waits', 'waits']);
    expect(redis.asked).toEqual(['host:a']);
  });

  test('an answer that arrives after the time it gave is asked again, for every job that waited for it', async () => {
    const redis = fakeRedis({ 'host:a': 100 });
    redis.hold();
    const first = redis.sessions.waiting('a');
    // The answer takes 150 ms: the key's 100 ms, counted from the question, are over when it arrives.
    redis.advance(150);
    const joined = redis.sessions.waiting('a');
    redis.stopHolding();
    await redis.answerOne();
    expect(await first).toBe('waits');
    expect(await joined).toBe('waits');
    expect(redis.asked).toEqual(['host:a', 'host:a']);
  });

  test('two late answers in a row: the host cannot be told ("answered late"), not "gave up"', async () => {
    const redis = fakeRedis({ 'host:a': 100 });
    redis.hold();
    const verdict = redis.sessions.waiting('a');
    redis.advance(150);
    await redis.answerOne();
    // The second question is out before its answer is held up as long.
    await redis.questionOut();
    redis.advance(150);
    await redis.answerOne();
    expect(await verdict).toBe('answered late');
  });

  test('a Redis that fails throws, so the caller can say the host is unknown', async () => {
    const sessions = new HostSessions({ pttl: () => Promise.reject(new Error('ECONNRESET')) }, (session) => session);
    await expect(sessions.waiting('a')).rejects.toThrow('ECONNRESET');
  });

  test('remembers a bounded number of sessions; one asked again goes to the back of the line', async () => {
    const ttls: Record<string, number> = {};
    for (let i = 0; i < 1_100; i++) ttls[`host:${i}`] = 60_000;
    const redis = fakeRedis(ttls);
    for (let i = 0; i < 1_024; i++) await redis.sessions.waiting(String(i));
    // Session 0 is asked again after its second: it moves to the back, so the overflow below forgets 1..76, not 0.
    redis.advance(TRUSTED_FOR_MS);
    await redis.sessions.waiting('0');
    for (let i = 1_024; i < 1_100; i++) await redis.sessions.waiting(String(i));
    const before = redis.asked.length;
    await redis.sessions.waiting('0');
    await redis.sessions.waiting('1');
    expect(redis.asked.slice(before)).toEqual(['host:1']);
  });
});
