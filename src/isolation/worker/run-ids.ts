import { randomFillSync } from 'node:crypto';

/**
 * Run ids a worker cannot guess. A worker names the call a message is about
 * by its run id; with ids it cannot guess, a worker can only speak for the
 * calls the host gave it, even before the host knows which worker took a
 * call. 48 random bits from the OS generator (Math.random's state can be
 * recovered from a few outputs), drawn from a pooled buffer so a call costs
 * no system call. Unique while in use: the caller retries on a clash.
 */
const POOL_BYTES = 6 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

export function randomRunId(): number {
  if (offset >= POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const id = pool.readUIntLE(offset, 6);
  offset += 6;
  return id === 0 ? randomRunId() : id;
}
