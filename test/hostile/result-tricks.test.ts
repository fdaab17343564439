/**
 * Zero trust, worker tier: results that try to slip past maxResultBytes or
 * the clone boundary. Limits hold for what actually crosses: every value is
 * read once, buffers cross at the size they show, error texts are bounded,
 * shared memory is refused, and a result that cannot cross says so at once.
 */
import { expect } from 'vitest';
import { textOf } from '../support/executors.ts';
import { attackSuite, errorMatching, succeeded } from './harness.ts';

const limited = { limits: { maxResultBytes: 1 << 20, timeoutMs: 20_000 } };
const bounded = (r: { isError: boolean; content: { type: string }[] }) => {
  expect(r.isError).toBe(true);
  expect(textOf(r as never).length).toBeLessThan(5_000);
};

attackSuite('result tricks', [
  {
    name: 'a getter that grows between the size check and the clone is read once',
    fixture: 'result-tricks.ts',
    target: 'growing-getter',
    options: limited,
    expectResult: (r) => {
      succeeded('getter')(r);
      expect(r.details).toEqual({ blob: 'small' });
    },
  },
  {
    name: 'a 16-byte view of a 100 MiB buffer crosses as 16 bytes',
    fixture: 'result-tricks.ts',
    target: 'view-of-huge-buffer',
    options: limited,
    expectResult: (r) => {
      succeeded('view')(r);
      const bytes = (r.details as { bytes: Uint8Array }).bytes;
      expect(bytes.byteLength).toBe(16);
      expect(bytes.buffer.byteLength).toBe(16);
    },
  },
  {
    name: 'a 100 MiB buffer is over maxResultBytes',
    fixture: 'result-tricks.ts',
    target: 'huge-buffer',
    options: limited,
    expectResult: errorMatching(/over the limit maxResultBytes \(1048576 bytes\)/),
  },
  { name: 'a 30 MB error text is bounded', fixture: 'result-tricks.ts', target: 'huge-error', expectResult: bounded },
  {
    name: 'a thrown 30 MB non-Error object is bounded',
    fixture: 'result-tricks.ts',
    target: 'huge-thrown-object',
    expectResult: bounded,
  },
  {
    name: 'an error whose message getter throws',
    fixture: 'result-tricks.ts',
    target: 'throwing-error-getter',
    expectResult: (r) => {
      bounded(r);
      expect(textOf(r)).toMatch(/cannot be read/);
    },
  },
  {
    name: 'a SharedArrayBuffer in details is refused',
    fixture: 'result-tricks.ts',
    target: 'shared-memory',
    expectResult: errorMatching(/shared memory \(SharedArrayBuffer\)/),
  },
  {
    name: 'a typed array over shared memory is refused',
    fixture: 'result-tricks.ts',
    target: 'view-of-shared-memory',
    expectResult: errorMatching(/shared memory \(SharedArrayBuffer\)/),
  },
  {
    name: 'a function in details is an error at once, not a timeout',
    fixture: 'result-tricks.ts',
    target: 'function',
    expectResult: errorMatching(/cannot be sent from the worker to the host \(result\.details\.run is a function\)/),
  },
  {
    name: 'a Proxy as the result is refused',
    fixture: 'result-tricks.ts',
    target: 'proxy',
    expectResult: errorMatching(/is a Proxy/),
  },
  {
    name: 'a getter that throws while the result is read',
    fixture: 'result-tricks.ts',
    target: 'throwing-getter',
    expectResult: errorMatching(/reading it threw: getter exploded/),
  },
  {
    name: 'a result nested 200,000 levels deep',
    fixture: 'result-tricks.ts',
    target: 'deep',
    expectResult: errorMatching(/nested deeper than 1000 levels/),
  },
  {
    name: 'a result sharing one big part 60,000 times is measured as the reader sees it',
    fixture: 'result-tricks.ts',
    target: 'shared-references',
    expectResult: errorMatching(/result is \d+ bytes, over the limit maxResultBytes/),
  },
  {
    name: 'a cyclic result crosses as a cycle',
    fixture: 'result-tricks.ts',
    target: 'cycle',
    expectResult: (r) => {
      succeeded('cycle')(r);
      const details = r.details as { self: unknown };
      expect(details.self).toBe(details);
    },
  },
  {
    name: '300,000 small keys are over maxResultBytes',
    fixture: 'result-tricks.ts',
    target: 'many-keys',
    options: limited,
    expectResult: errorMatching(/over the limit maxResultBytes/),
  },
  {
    name: 'an update over maxResultBytes fails its call',
    fixture: 'result-tricks.ts',
    target: 'huge-update',
    options: limited,
    expectResult: errorMatching(/update is \d+ bytes, over the limit/),
  },
  {
    name: 'a Map in details is refused with a message that says what to send',
    fixture: 'result-tricks.ts',
    target: 'map',
    expectResult: errorMatching(/is a Map; send an array or object/),
  },
  {
    name: 'a result of the wrong shape',
    fixture: 'result-tricks.ts',
    target: 'bad-shape',
    expectResult: errorMatching(/"content" must be an array/),
  },
]);
