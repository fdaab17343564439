/**
 * Zero trust, worker tier: host functions. A worker reaches the host only as
 * "call this listed function with these cloned arguments"; comlink's get,
 * set and construct are gone, and inherited names name nothing.
 */
import { expect, test } from 'vitest';
import { HostFunctionTable } from '../../src/isolation/worker/host-functions.ts';
import { MessageChannel } from 'node:worker_threads';
import { textOf } from '../support/executors.ts';
import { attackSuite, brokeProtocol, succeeded } from './harness.ts';

let slowEchoPeak = 0;

/** A host function that takes 50 ms, recording how many ran at once. */
function slowEcho() {
  let running = 0;
  slowEchoPeak = 0;
  return {
    echo: async (value: unknown) => {
      slowEchoPeak = Math.max(slowEchoPeak, ++running);
      await new Promise((resolve) => setTimeout(resolve, 50));
      running--;
      return value;
    },
  };
}

attackSuite('host functions', [
  {
    name: 'comlink get/set/construct messages on every port',
    fixture: 'host-functions.ts',
    target: 'comlink-on-ports',
    expectResult: brokeProtocol,
    expectHost: ({ hostCalls }) => expect(hostCalls).toEqual([]),
  },
  {
    name: 'constructor, __proto__, toString and friends are not host functions',
    fixture: 'host-functions.ts',
    target: 'inherited-names',
    expectResult: succeeded(
      'constructor: absent, __proto__: absent, toString: absent, hasOwnProperty: absent, valueOf: absent',
    ),
  },
  {
    name: 'an argument with a __proto__ key arrives as data and pollutes nothing',
    fixture: 'host-functions.ts',
    target: 'proto-argument',
    expectResult: (r) => {
      succeeded('echoed')(r);
      expect(r.details).toEqual({ keys: ['__proto__', 'plain'] });
    },
    expectHost: ({ hostCalls }) => expect(hostCalls).toEqual(['echo']),
  },
  {
    name: 'a function as an argument is refused in the worker',
    fixture: 'host-functions.ts',
    target: 'function-argument',
    expectResult: succeeded(/^refused: Host call echo\(\) failed: its arguments cannot be sent/),
    expectHost: ({ hostCalls }) => expect(hostCalls).toEqual([]),
  },
  {
    name: 'a host function kept and called after its call ended is refused',
    fixture: 'host-functions.ts',
    target: 'after-the-call',
    workers: 1,
    expectResult: succeeded('returned'),
    expectHost: ({ hostCalls }) => expect(hostCalls).toEqual([]),
  },
  {
    name: '2,000 host calls at once are all answered',
    fixture: 'host-functions.ts',
    target: 'flood',
    expectResult: succeeded('echoed 2000'),
  },
  {
    name: 'host-call arguments larger than maxResultBytes are refused before the host function runs',
    fixture: 'host-functions.ts',
    target: 'huge-argument',
    options: { limits: { maxResultBytes: 64 * 1024 } },
    expectResult: succeeded(
      /^refused: Host call echo\(\) refused: its arguments are \d+ bytes, over the limit maxResultBytes \(65536 bytes\)/,
    ),
    expectHost: ({ hostCalls }) => expect(hostCalls).toEqual([]),
  },
  {
    name: 'a flood of slow host calls runs at most 64 at once and refuses what does not fit the queue',
    fixture: 'host-functions.ts',
    target: 'flood-past-queue',
    options: { host: slowEcho() },
    expectResult: (result) => {
      succeeded(/^answered \d+, refused \d+$/)(result);
      const [answered, refused] = textOf(result).match(/\d+/g)!.map(Number);
      expect(answered! + refused!).toBe(6_000);
      expect(answered).toBeGreaterThanOrEqual(64 + 4_096);
      expect(refused).toBeGreaterThan(0);
      expect(slowEchoPeak).toBeLessThanOrEqual(64);
    },
  },
]);

test('the host function table answers only its own listed functions, and never touches prototypes', async () => {
  const table = new HostFunctionTable({ echo: (value: unknown) => value });
  const replies: unknown[] = [];
  let id = 100;
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'echo']) {
    await table.answer({ id: id++, name, args: ['x'] }, (reply) => void replies.push(reply), 1_000);
  }
  expect(replies.filter((reply) => (reply as { ok: boolean }).ok)).toEqual([{ id: 105, ok: true, value: 'x' }]);
  expect(replies).toHaveLength(6);
  expect(table.names).toEqual(['echo']);
});

test('a host function whose result cannot be sent answers with an error instead of throwing on the host', async () => {
  const table = new HostFunctionTable({ handle: () => () => 'a function' });
  const { port1, port2 } = new MessageChannel();
  const reply = new Promise((resolve) => port2.once('message', resolve));
  await table.answer({ id: 7, name: 'handle', args: [] }, (message) => port1.postMessage(message), 1_000);
  expect(await reply).toMatchObject({ id: 7, ok: false, error: expect.stringMatching(/its result cannot be sent/) });
  port1.close();
});
