import { availableParallelism } from 'node:os';
import { RemoteErrors } from '../../core/errors.ts';
import { redisTarget, type Connection, type RedisTarget } from './connection.ts';
import { checkQueueName } from './queue-name.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

export interface ServeQueueOptions {
  /** Where Redis is: a `redis://` / `rediss://` URL, or `{ host, port, username?, password?, db?, tls? }`. */
  connection: Connection;
  /** The BullMQ queue to take calls from (BullMQ's default key prefix, `bull`). */
  queue: string;
  /** Calls this machine runs at once (default: its number of CPUs). */
  concurrency?: number;
  /** Hears when Redis becomes unreachable and when it is back (`toolpool worker` logs it); nothing is said otherwise. */
  log?: (line: string) => void;
}

export interface CheckedServeOptions {
  target: RedisTarget;
  queue: string;
  concurrency: number;
  log: (line: string) => void;
}

/** Checks serveQueue's options; throws a TypeError naming the one that is wrong. */
export function checkServeOptions(options: ServeQueueOptions): CheckedServeOptions {
  return {
    target: redisTarget(options.connection),
    queue: checkQueueName('serveQueue', options.queue),
    concurrency: checkConcurrency(options.concurrency),
    log: typeof options.log === 'function' ? options.log : () => undefined,
  };
}

function checkConcurrency(value: unknown): number {
  if (value === undefined) return availableParallelism();
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > 1_000) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badOption('serveQueue', 'concurrency', 'must be an integer from 1 to 1000'),
    );
  }
  return value as number;
}
