import { ToolpoolError, ToolpoolTypeError } from '../../core/error-codes.ts';
import { readRecord, type Ledger, type LedgerKey, type LedgerRecord } from '../../core/ledger.ts';
import { openClient, redisTarget, type Connection } from './connection.ts';

export interface RedisLedgerOptions {
  /** A `redis://` URL or `{ host, port, username?, password?, db?, tls? }`, as for `remoteRunner`. */
  connection: Connection;
  /** Key prefix (default `toolpool:ledger`): a record is `<prefix>:["<runId>","<callId>"]`. */
  prefix?: string;
  /**
   * How long a record lives (default 7 days), whether its call ended or not:
   * a retry within that time is answered from it (a claim by a host that
   * died stays "started, never ended" until then); after it, the key is new.
   */
  expireAfterMs?: number;
  /** How long a call waits for Redis to (re)connect before it fails without running (default 5000 ms). */
  connectTimeoutMs?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

// Deletes a claim only while it has no end (a record whose call ended is never removed).
const RELEASE = `local v = redis.call('GET', KEYS[1]) if v and not string.find(v, '"end":', 1, true) then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * A ledger in Redis, for hosts on many machines: a call is claimed with
 * `SET key record NX PX expireAfterMs` (one host wins a race; the others
 * get its record), its end written over it with `KEEPTTL`. A record is as
 * durable as the Redis that holds it: with `appendonly yes` and
 * `appendfsync always` it survives a crash of Redis itself.
 */
export function redisLedger(options: RedisLedgerOptions): Ledger {
  if (typeof options !== 'object' || options === null)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      'redisLedger(options): options must be { connection, prefix?, expireAfterMs? }',
    );
  const target = redisTarget(options.connection);
  const prefix = options.prefix ?? 'toolpool:ledger';
  const expireAfterMs = options.expireAfterMs ?? 7 * DAY_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  if (typeof prefix !== 'string' || prefix === '')
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', 'redisLedger: prefix must be a non-empty string');
  if (!(Number.isInteger(expireAfterMs) && expireAfterMs >= 1000))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      `redisLedger: expireAfterMs must be an integer >= 1000, got ${String(options.expireAfterMs)}`,
    );
  if (!(Number.isInteger(connectTimeoutMs) && connectTimeoutMs >= 0))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      `redisLedger: connectTimeoutMs must be an integer >= 0, got ${String(options.connectTimeoutMs)}`,
    );
  const client = openClient(target, 'command', 'toolpool-ledger');
  const keyOf = ({ runId, callId }: LedgerKey) => `${prefix}:${JSON.stringify([runId, callId])}`;
  const ready = async () => {
    if (!(await client.whenReady(connectTimeoutMs)))
      throw new ToolpoolError('TOOLPOOL_ERR_LEDGER', `Redis at ${target.where} is unreachable (${client.lastError})`);
  };
  const read = async (key: string): Promise<LedgerRecord | undefined> => {
    const text = await client.redis.get(key);
    if (text === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const record = readRecord(value);
    if (!record) throw new ToolpoolError('TOOLPOOL_ERR_LEDGER', `its record ${key} is unreadable`);
    return record;
  };
  return {
    name: `redisLedger(${target.where})`,
    async claim(key, record) {
      await ready();
      const name = keyOf(key);
      // Twice: a record that expired between the SET and the GET is claimed on the second try.
      for (let attempt = 0; attempt < 2; attempt++) {
        if ((await client.redis.set(name, JSON.stringify(record), 'PX', expireAfterMs, 'NX')) === 'OK')
          return undefined;
        const found = await read(name);
        if (found) return found;
      }
      throw new ToolpoolError('TOOLPOOL_ERR_LEDGER', `the record ${name} came and went while it was claimed`);
    },
    async end(key, end) {
      await ready();
      const name = keyOf(key);
      const record = await read(name);
      if (!record)
        throw new ToolpoolError(
          'TOOLPOOL_ERR_LEDGER',
          `the record ${name} expired before the call ended (expireAfterMs ${expireAfterMs})`,
        );
      await client.redis.set(name, JSON.stringify({ ...record, end }), 'KEEPTTL', 'XX');
    },
    async release(key) {
      await ready();
      await client.redis.eval(RELEASE, 1, keyOf(key));
    },
    async close() {
      client.close();
    },
  };
}
