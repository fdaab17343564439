import { AdapterErrors } from '../core/errors.ts';
import { helpFlag, integerFlag } from './args.ts';
import { parseFlags } from './flags.ts';
import { oneLineMessage, runError, usageError } from './errors.ts';
import {
  executorFlags,
  executorFlagsHelp,
  executorLoader,
  logCalls,
  stopSignal,
  toolsFlagHelp,
  withBareAllowNet,
} from './executor-flags.ts';

export const workerHelp = `Usage: toolpool worker --redis <url> --queue <name> --tools <file|folder>... [options]

A worker machine for hosts that use remoteRunner() of toolpool/bullmq: takes
tool calls from a BullMQ queue in Redis and runs each through toolpool here
(validation again, limits, isolation, the hard kill), relaying progress and
answering with the result. A call whose host timed it out or aborted it is
stopped here. Start one on each machine; logs (one line per failed call) go
to stderr.

Options:
      --redis <url>           Redis: redis://[user:password@]host:port[/db], or rediss:// for TLS
                              (default: the TOOLPOOL_REDIS_URL environment variable, which keeps
                              a password out of the process list)
      --queue <name>          The BullMQ queue to take calls from (the hosts' queue option)
${toolsFlagHelp}
                              The host must have the same modules: a call whose module differs
                              here is refused, saying the versions differ.
      --concurrency <n>       Calls run at once (default: the number of CPUs)
${executorFlagsHelp}
  -h, --help                  Show this help

Anyone who can write to the Redis can submit calls: protect it with a password or ACL, and
give the tools here only the permissions they need (--allow-read, --allow-write).

It stops on SIGINT/SIGTERM: calls running are stopped (killed after their grace period if
they ignore their signal) and answered with an error; it exits 0 and leaves no workers or
child processes. TOOLPOOL_DEBUG=1 prints the stack of an error that stops it.

Example:
  TOOLPOOL_REDIS_URL=redis://:secret@10.0.0.5:6379 toolpool worker --queue tools --tools ./tools --isolation process`;

export async function workerCommand(argv: string[]): Promise<number> {
  const { values } = parseFlags('worker', {
    args: withBareAllowNet(argv),
    strict: true,
    options: {
      ...helpFlag,
      ...executorFlags,
      redis: { type: 'string' },
      queue: { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  if (values.help) {
    process.stdout.write(`${workerHelp}\n`);
    return 0;
  }
  // From the environment, a password stays off the command line (which every user of the machine can read).
  const redis = values.redis ?? process.env.TOOLPOOL_REDIS_URL;
  if (redis === undefined) throw usageError('worker', 'missing --redis <url> (or TOOLPOOL_REDIS_URL)');
  if (values.queue === undefined) throw usageError('worker', 'missing --queue <name>');
  const loadExecutor = executorLoader('worker', values);
  const concurrency = integerFlag('worker', 'concurrency', values.concurrency);
  const bullmq = await loadBullmq();
  let target;
  try {
    target = { connection: redis, queue: values.queue, log, ...(concurrency !== undefined ? { concurrency } : {}) };
    bullmq.checkServeOptions(target);
  } catch (error) {
    throw usageError('worker', oneLineMessage(error));
  }
  // Listen first: a signal while the tools load still ends in a clean stop.
  const stopped = stopSignal();
  const executor = await loadExecutor();
  try {
    logCalls(executor, log, 'failures');
    const server = bullmq.serveQueue(executor, target);
    log(
      `${executor.definitions.length} tool(s) (${executor.definitions.map((d) => d.name).join(', ')}) on queue ${values.queue} at ${bullmq.redisWhere(redis)}`,
    );
    log(`stopping: ${await stopped}`);
    await server.close();
  } finally {
    // Also when serving could not start: no worker or child may outlive the command.
    await executor.close();
  }
  return 0;
}

/** toolpool/bullmq needs bullmq and ioredis, optional peer dependencies: say how to get them. */
async function loadBullmq() {
  try {
    const [{ serveQueue }, { redisTarget }, { checkServeOptions }] = await Promise.all([
      import('../adapters/bullmq/serve-queue.ts'),
      import('../adapters/bullmq/connection.ts'),
      import('../adapters/bullmq/serve-options.ts'),
    ]);
    return { serveQueue, checkServeOptions, redisWhere: (url: string) => redisTarget(url).where };
  } catch (error) {
    throw runError(AdapterErrors.bullmqMissing(oneLineMessage(error)), error);
  }
}

function log(line: string): void {
  process.stderr.write(`toolpool worker: ${line}\n`);
}
