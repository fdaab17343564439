/**
 * The sandbox's stdout and stderr are sockets the host makes for each start
 * (sandbox-stdio.ts). A host short of descriptors must get an error for that
 * start: before, a connection libuv accepted and closed at once (its answer
 * to EMFILE, without an event) left the start waiting for ever with its
 * server listening, and a failed connect left the server open.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { findPrlimit } from '../../src/isolation/process/child-launcher.ts';
import { sandboxStdio } from '../../src/isolation/sandbox/sandbox-stdio.ts';
import { inDeepTmpdir } from '../support/deep-tmpdir.ts';
import { fixture } from '../support/executors.ts';

const prlimit = findPrlimit();

// prlimit (util-linux) sets the descriptor limit of the process under test; without it the case cannot be set up.
describe.skipIf(!prlimit)('sandbox stdio on a host out of descriptors', () => {
  test('each start either gets its sockets or an error, and leaves nothing open', () => {
    const outcomes: string[] = [];
    // 1 to 6 descriptors left: the connect fails, the accept fails, or both pairs are made.
    for (let free = 1; free <= 6; free++) {
      const run = spawnSync(
        prlimit!,
        [
          '--nofile=64',
          process.execPath,
          '--import',
          'tsx',
          fixture('sandbox-stdio/out-of-descriptors.ts'),
          String(free),
        ],
        { encoding: 'utf8', timeout: 20_000 },
      );
      // A start that waits for ever shows as a killed process; one left listening keeps it from exiting by itself.
      expect({ free, status: run.status, signal: run.signal, stderr: run.stderr }).toMatchObject({
        free,
        status: 0,
        signal: null,
      });
      outcomes.push(run.stdout.trim());
    }
    expect(outcomes.every((line) => /^(ok|rejected: .+)$/.test(line))).toBe(true);
    // Which step runs out (the connect, or the accept that libuv closes unheard) depends on the line and on what the
    // process had opened by then; that some start ran out, and that the roomiest one made its sockets, does not.
    expect(outcomes.some((line) => line.startsWith('rejected: '))).toBe(true);
    expect(outcomes.at(-1)).toBe('ok');
  }, 120_000);
});

describe('sandbox stdio in a deep temporary folder', () => {
  test('a socket path too long to listen at fails the start with what to do, and leaves nothing behind', async () => {
    // Node 20 listened at the path cut short, outside the private folder, where another user could connect first.
    const left = await inDeepTmpdir(() =>
      expect(sandboxStdio()).rejects.toThrow(
        /at most 107 bytes, and this one has \d+ .*Set TMPDIR to a shorter folder/,
      ),
    );
    expect(left).toEqual([]);
  });
});
