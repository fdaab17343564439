// toolpool/bullmq: tools across machines on a BullMQ queue over Redis.
export { serveQueue } from './serve-queue.ts';
export type { QueueServer, ServeQueueOptions } from './serve-queue.ts';
export type { ServedExecutor } from './queued-call.ts';
export { remoteRunner } from './remote-runner.ts';
export type { RemoteRunnerOptions } from './remote-runner.ts';
export type { Connection, RedisAddress } from './connection.ts';
