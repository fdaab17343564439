import type { ConnectionOptions as TlsOptions } from 'node:tls';
import { Redis, type RedisOptions } from 'ioredis';
import { RemoteErrors, errorMessage } from '../../core/errors.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

/** Where Redis is: a `redis://` / `rediss://` URL, or its parts. */
export type Connection = string | RedisAddress;

export interface RedisAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
  /** The database number (default 0). */
  db?: number;
  /** TLS: `true`, or Node's TLS options (a CA, a server name). */
  tls?: boolean | TlsOptions;
}

/** A checked connection: ioredis options, and how messages name it (never with its password). */
export interface RedisTarget {
  options: RedisOptions;
  where: string;
}

const ADDRESS_KEYS = new Set(['host', 'port', 'username', 'password', 'db', 'tls']);

/** Checks a `connection` option; throws a TypeError saying what is wrong with it. */
export function redisTarget(connection: unknown): RedisTarget {
  const address = typeof connection === 'string' ? addressOfUrl(connection) : checkAddress(connection);
  const { host, port, username, password, db, tls } = address;
  const scheme = tls ? 'rediss' : 'redis';
  return {
    options: {
      host,
      port,
      ...(username !== undefined ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(db !== undefined ? { db } : {}),
      ...(tls ? { tls: tls === true ? {} : tls } : {}),
    },
    where: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${db ? `/${db}` : ''}`,
  };
}

function addressOfUrl(text: string): RedisAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection(`${JSON.stringify(text.slice(0, 200))} is not a URL`),
    );
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection(`has the scheme ${url.protocol}`),
    );
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection(`has the path /${db.slice(0, 50)}, which is not a database number`),
    );
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(db !== '' ? { db: Number(db) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: true } : {}),
  };
}

function checkAddress(value: unknown): RedisAddress {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection(`is ${value === null ? 'null' : typeof value}`),
    );
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !ADDRESS_KEYS.has(key));
  if (unknown !== undefined)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection(`has an unknown key "${unknown.slice(0, 100)}"`),
    );
  const { host, port, username, password, db, tls } = fields;
  if (typeof host !== 'string' || host === '')
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', RemoteErrors.badConnection('needs a host name'));
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65_535)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection('needs a port from 1 to 65535'),
    );
  for (const [key, text] of [
    ['username', username],
    ['password', password],
  ] as const) {
    if (text !== undefined && typeof text !== 'string')
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        RemoteErrors.badConnection(`.${key} must be a string`),
      );
  }
  if (db !== undefined && !(Number.isInteger(db) && (db as number) >= 0))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection('.db must be a database number'),
    );
  if (tls !== undefined && typeof tls !== 'boolean' && (typeof tls !== 'object' || tls === null))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badConnection('.tls must be true, false or TLS options'),
    );
  return fields as unknown as RedisAddress;
}

/**
 * How each connection behaves while Redis is away:
 * - `command` (the host's commands): a command fails at once instead of
 *   waiting in an offline queue, and one that was sent when the connection
 *   dropped is not sent again after it comes back (a late `add` would
 *   submit a call the host already gave up on);
 * - `reader` (the host's event stream): the same, its loop retries;
 * - `worker` (a worker machine's, for BullMQ's Worker and the cancel
 *   channel): commands wait for Redis to come back, as BullMQ needs.
 */
export type ClientRole = 'command' | 'reader' | 'worker';

/** Reconnect soon, but not in a tight loop. */
const retryStrategy = (attempt: number) => Math.min(100 * attempt, 1_000);

/** A client with a permanent 'error' listener (ioredis without one throws the first connection error at the process). */
export function openClient(
  target: RedisTarget,
  role: ClientRole,
  name: string,
  connectTimeoutMs = 2_000,
): LinkedClient {
  const failFast: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  };
  const client = new Redis({
    ...target.options,
    connectionName: name,
    retryStrategy,
    connectTimeout: connectTimeoutMs,
    ...(role === 'worker' ? { maxRetriesPerRequest: null } : failFast),
    ...(role === 'command' ? { commandTimeout: 5_000 } : {}),
  });
  return new LinkedClient(client, target.where);
}

/** An ioredis client and what its connection last said, for messages. */
export class LinkedClient {
  #lastError = 'not connected yet';
  #errorSeen = false;

  constructor(
    readonly redis: Redis,
    readonly where: string,
  ) {
    redis.on('error', (error: unknown) => {
      this.#lastError = errorMessage(error);
      this.#errorSeen = true;
    });
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  /** Whether the connection ever reported an error (else `lastError` is only "not connected yet"). */
  get errorSeen(): boolean {
    return this.#errorSeen;
  }

  /** Why it is not ready: the last connection error. */
  get lastError(): string {
    return this.#lastError;
  }

  /**
   * Resolves true once the connection is ready; false after `ms`, when it
   * is closed for good, or when its next connection attempt fails (Redis
   * refusing connections is known at once: no call waits out `ms` for it).
   */
  whenReady(ms: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady).off('end', onEnd).off('error', onEnd);
        resolve(ready);
      };
      const onReady = () => done(true);
      const onEnd = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      this.redis.on('ready', onReady).on('end', onEnd).on('error', onEnd);
    });
  }

  /** Drops the connection without QUIT (which waits for a reply a Redis that is down never sends). */
  close(): void {
    this.redis.disconnect(false);
  }
}
