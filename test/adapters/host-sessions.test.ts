import { describe, expect, test } from 'vitest';
import { HostSessions } from '../../src/adapters/bullmq/host-sessions.ts';

// A worker machine asks Redis whether a call's host still waits (issue 26: nothing runs after its host gave up).
// It asks once per session and key lifetime (issue 27: one round trip less per job), never past the time Redis gave.

/** A Redis whose keys have the PTTLs in `ttls`, a clock the test moves, and a count of the PTTLs asked. */
function fakeRedis(ttls: Record<string, number>) {
  let monotonic = 1_000;
  let wall = 1_700_000_000_000;
  const asked: string[] = [];
  let answer: (() => void) | undefined;
  let held = false;
  const redis = {
    async pttl(key: string) {
      asked.push(key);
      if (held) await new Promise<void>((resolve) => (answer = resolve));
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
    hold: () => (held = true),
    release: () => ((held = false), answer?.()),
  };
}

describe('HostSessions', () => {
  test('a live session is asked once, then known until the time its key had left', async () => {
    const redis = fakeRedis({ 'host:a': 10_000 });
    expect(await redis.sessions.waiting('a')).toBe(true);
    redis.advance(9_999);
    expect(await redis.sessions.waiting('a')).toBe(true);
    expect(redis.asked).toEqual(['host:a']);
    // Its time is up: Redis is asked again (the host may have refreshed the key, or given up).
    redis.advance(1);
    expect(await redis.sessions.waiting('a')).toBe(true);
    expect(redis.asked).toEqual(['host:a', 'host:a']);
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
    redis.advance(10_000);
    await redis.sessions.waiting('a');
    expect(redis.asked).toEqual(['host:a', 'host:a']);
  });

  test('a session whose key is gone is refused, and asked again next time (it is never remembered)', async () => {
    const redis = fakeRedis({});
    expect(await redis.sessions.waiting('gone')).toBe(false);
    expect(await redis.sessions.waiting('gone')).toBe(false);
    expect(redis.asked).toHaveLength(2);
  });

  test('a key without an expiry waits but is not remembered', async () => {
    const redis = fakeRedis({ 'host:forever': -1 });
    expect(await redis.sessions.waiting('forever')).toBe(true);
    expect(await redis.sessions.waiting('forever')).toBe(true);
    expect(redis.asked).toHaveLength(2);
  });

  test('jobs of one session that arrive together share one question', async () => {
    const redis = fakeRedis({ 'host:a': 5_000 });
    redis.hold();
    const answers = [redis.sessions.waiting('a'), redis.sessions.waiting('a'), redis.sessions.waiting('a')];
    redis.release();
    expect(await Promise.all(answers)).toEqual([true, true, true]);
    expect(redis.asked).toEqual(['host:a']);
  });

  test('a job that joined a question is judged by the time Redis gave, counted from when it was asked', async () => {
    const redis = fakeRedis({ 'host:a': 100 });
    redis.hold();
    const first = redis.sessions.waiting('a');
    // The answer takes 150 ms to arrive: the key's 100 ms, counted from the question, are over by then.
    redis.advance(150);
    const joined = redis.sessions.waiting('a');
    redis.release();
    expect(await first).toBe(false);
    expect(await joined).toBe(false);
  });

  test('a Redis that fails throws, so the caller can say the host is unknown', async () => {
    const sessions = new HostSessions({ pttl: () => Promise.reject(new Error('ECONNRESET')) }, (session) => session);
    await expect(sessions.waiting('a')).rejects.toThrow('ECONNRESET');
  });

  test('remembers a bounded number of sessions', async () => {
    const ttls: Record<string, number> = {};
    for (let i = 0; i < 1_100; i++) ttls[`host:${i}`] = 60_000;
    const redis = fakeRedis(ttls);
    for (let i = 0; i < 1_100; i++) await redis.sessions.waiting(String(i));
    // The first sessions were forgotten to make room: asking for one goes to Redis again; the last is remembered.
    await redis.sessions.waiting('0');
    await redis.sessions.waiting('1099');
    expect(redis.asked.slice(1_100)).toEqual(['host:0']);
  });
});
