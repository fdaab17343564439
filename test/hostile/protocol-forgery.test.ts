/** Zero trust, worker tier: forged and malformed messages on toolpool's channels. */
import { afterAll, beforeAll, expect } from 'vitest';
import { attackSuite, brokeProtocol, errorMatching, succeeded } from './harness.ts';

// A flood of messages must not make the host pile up listeners (one terminate() per message added an 'exit' listener each).
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
beforeAll(() => void process.on('warning', onWarning));
afterAll(() => {
  process.off('warning', onWarning);
  expect(warnings.filter((text) => text.startsWith('MaxListenersExceededWarning'))).toEqual([]);
});

const noHostCalls = ({ hostCalls }: { hostCalls: string[] }) => expect(hostCalls).toEqual([]);

attackSuite('protocol forgery', [
  {
    name: 'null on every port it can find',
    fixture: 'protocol-forgery.ts',
    target: 'null-on-ports',
    expectResult: brokeProtocol,
  },
  {
    name: 'junk of every type on every port',
    fixture: 'protocol-forgery.ts',
    target: 'junk-on-ports',
    expectResult: brokeProtocol,
  },
  {
    name: 'junk, fake hellos and fake piscina replies on the parent port',
    fixture: 'protocol-forgery.ts',
    target: 'junk-on-parent-port',
    expectResult: brokeProtocol,
  },
  {
    name: 'a forged hello offering a port the tool holds, then comlink get/apply/set on it',
    fixture: 'protocol-forgery.ts',
    target: 'forged-hello',
    expectResult: brokeProtocol,
    expectHost: noHostCalls,
  },
  {
    name: 'forged hellos for 200 thread ids',
    fixture: 'protocol-forgery.ts',
    target: 'forged-hello-flood',
    expectResult: brokeProtocol,
  },
  {
    name: 'a forged result for a guessed run id',
    fixture: 'protocol-forgery.ts',
    target: 'forged-result',
    expectResult: brokeProtocol,
  },
  {
    name: 'a forged update for another call',
    fixture: 'protocol-forgery.ts',
    target: 'forged-update',
    expectResult: brokeProtocol,
  },
  {
    name: 'its own result with a negative cpuMs in its usage',
    fixture: 'protocol-forgery.ts',
    target: 'bad-usage-own-call',
    expectResult: errorMatching(/broke toolpool's protocol \(it sent a result with a malformed "usage.cpuMs" \(-1\)\)/),
  },
  {
    name: 'its own result with a usage that is a string',
    fixture: 'protocol-forgery.ts',
    target: 'string-usage-own-call',
    expectResult: errorMatching(/broke toolpool's protocol \(it sent a result with a malformed "usage" \("lots"\)\)/),
  },
  {
    name: 'a forged start for a call it was not given',
    fixture: 'protocol-forgery.ts',
    target: 'forged-start',
    expectResult: brokeProtocol,
  },
  {
    name: 'claiming a lease it was not given',
    fixture: 'protocol-forgery.ts',
    target: 'forged-serving',
    expectResult: brokeProtocol,
  },
  {
    name: 'refusing a call it was never sent',
    fixture: 'protocol-forgery.ts',
    target: 'forged-refused',
    expectResult: brokeProtocol,
  },
  {
    name: 'a second hello offering its own start counter',
    fixture: 'protocol-forgery.ts',
    target: 'hello-with-own-counter',
    expectResult: brokeProtocol,
  },
  {
    name: 'a forged host call for another call',
    fixture: 'protocol-forgery.ts',
    target: 'forged-host-call',
    expectResult: brokeProtocol,
    expectHost: noHostCalls,
  },
  {
    name: 'forged piscina replies for every task id on every port',
    fixture: 'protocol-forgery.ts',
    target: 'piscina-reply',
    expectResult: (r) => expect(r.isError).toBe(true),
  },
  {
    name: 'a 64 MiB message on every port',
    fixture: 'protocol-forgery.ts',
    target: 'huge-message',
    expectResult: brokeProtocol,
  },
  {
    name: '20,000 messages on the parent port',
    fixture: 'protocol-forgery.ts',
    target: 'message-flood',
    expectResult: brokeProtocol,
  },
  {
    name: 'closing every port it can find',
    fixture: 'protocol-forgery.ts',
    target: 'close-ports',
    expectResult: (r) => expect(r.isError).toBe(true),
  },
  {
    name: 'a message carrying a __proto__ key',
    fixture: 'protocol-forgery.ts',
    target: 'prototype-message',
    expectResult: brokeProtocol,
  },
  {
    name: 'a MessagePort inside its result',
    fixture: 'protocol-forgery.ts',
    target: 'port-in-update',
    expectResult: (r) => {
      expect(r.isError).toBe(true);
      expect(r.content[0]).toMatchObject({ text: expect.stringMatching(/instance of MessagePort, not plain data/) });
    },
  },
  {
    name: 'a tool that only finds the ports, and posts nothing, is served',
    fixture: 'protocol-forgery.ts',
    target: 'find-only',
    expectResult: succeeded('survived'),
  },
]);

attackSuite('reaching the heap', [
  {
    name: 'connecting an inspector session to read the worker heap is refused',
    fixture: 'protocol-forgery.ts',
    target: 'inspector',
    expectResult: (r) => {
      expect(r.isError).toBe(true);
      expect(r.content[0]).toMatchObject({ text: expect.stringMatching(/inspector is not available to tools/) });
    },
  },
]);
