import { EventEmitter } from 'node:events';
import { MessageChannel, type Worker } from 'node:worker_threads';
import { afterEach, expect, test, vi } from 'vitest';
import { HostFunctionTable } from '../../src/isolation/worker/host-functions.ts';
import { StartCounter } from '../../src/isolation/worker/start-counter.ts';
import { type ChannelOwner, WorkerChannel } from '../../src/isolation/worker/worker-channel.ts';

/**
 * Found by the fault soak (seed 3, worker tier): a worker that exited of its
 * own cause (process.exit(7), a heap bomb) was sometimes reported as having
 * "broken toolpool's protocol (it closed its channel)": its channel closes
 * as its thread dies, and on a loaded machine the exit event came later than
 * the grace the host gave it. The exit now decides, whenever it comes.
 */
const open: MessageChannel[] = [];
afterEach(() => {
  for (const channel of open.splice(0)) channel.port1.close();
});

function fakeWorker() {
  const worker = new EventEmitter() as EventEmitter & { terminate: () => Promise<number>; unref: () => void };
  worker.terminate = vi.fn(async () => 1);
  worker.unref = () => undefined;
  const ports = new MessageChannel();
  open.push(ports);
  const owner: ChannelOwner = {
    hostFunctions: new HostFunctionTable({}),
    leased: () => true,
    requeue: () => undefined,
    freed: () => undefined,
    forget: () => undefined,
    stuckThreadEnded: () => undefined,
  };
  const channel = new WorkerChannel(
    worker as unknown as Worker,
    ports.port1,
    StartCounter.from(new SharedArrayBuffer(4))!,
    owner,
  );
  return { worker, channel, workerEnd: ports.port2 };
}

test('a worker whose exit comes long after its channel closed is told its exit, not a protocol breach', async () => {
  const { worker, channel, workerEnd } = fakeWorker();
  workerEnd.close(); // the thread is dying: its end of the channel goes first
  // The grace passes without an exit: the host terminates the thread to learn whether it was alive.
  await vi.waitFor(() => expect(worker.terminate).toHaveBeenCalled(), { timeout: 10_000 });
  expect(channel.retired).toBeUndefined();
  worker.emit('exit', 7); // it was dying of its own exit
  expect(channel.retired).toBe('it exited with code 7');
});

test('a worker that closed its channel and lived on until terminated broke the protocol', async () => {
  const { worker, channel, workerEnd } = fakeWorker();
  workerEnd.close();
  await vi.waitFor(() => expect(worker.terminate).toHaveBeenCalled(), { timeout: 10_000 });
  worker.emit('exit', 1); // the exit of the host's terminate, with no error of its own
  expect(channel.retired).toBe('it closed its channel');
});

test('a thread that takes long to end after its channel closed (a full heap torn down) is not called a protocol breach', async () => {
  const { worker, channel, workerEnd } = fakeWorker();
  workerEnd.close();
  await vi.waitFor(() => expect(worker.terminate).toHaveBeenCalled(), { timeout: 10_000 });
  // It does not end within the second a terminated thread gets: it is abandoned (its slot freed), told it exited, not accused.
  await vi.waitFor(() => expect(channel.abandoned).toBe(true), { timeout: 10_000 });
  expect(channel.retired).toBe('it exited with code 1');
});
