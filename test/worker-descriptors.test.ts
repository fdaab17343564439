import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { fixture } from './support/executors.ts';

// Descriptors are the process's, not the thread's: a worker that ends leaves
// open every file its tools opened with fs.open/openSync. A tool that leaks
// one per call (a bug, not only an attack) would take its host to EMFILE.
describe('descriptors a worker-tier tool leaves open', () => {
  // 1,200 descriptors leaked under a limit of 1,024 (a lower limit is no test: a fresh worker importing TypeBox holds
  // a few hundred files open at once, leak or not).
  test('are closed when its worker is retired: 60 calls that leak 20 each, under a limit of 1,024 descriptors', {
    timeout: 150_000,
  }, () => {
    const run = spawnSync(
      'prlimit',
      [
        '--nofile=1024:1024',
        process.execPath,
        '--import',
        'tsx',
        fixture('descriptors/host-of-a-leaking-tool.ts'),
        '60',
        '20',
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(report).toEqual({ calls: 60, failed: 0, firstError: '', hostOpens: 'yes' });
  });
});
