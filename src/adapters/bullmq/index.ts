/// <reference types="node" preserve="true" />
// toolpool/bullmq: tools across machines on a BullMQ queue over Redis.
export { serveQueue } from './serve-queue.ts';
export type { QueueServer } from './serve-queue.ts';
export type { ServeQueueOptions } from './serve-options.ts';
export type { ServedExecutor } from './queued-call.ts';
export { remoteRunner } from './remote-runner.ts';
export type { RemoteRunnerOptions } from './remote-runner.ts';
export type { Connection, RedisAddress } from './connection.ts';
export { redisLedger } from './redis-ledger.ts';
export type { RedisLedgerOptions } from './redis-ledger.ts';
