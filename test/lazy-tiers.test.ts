/**
 * The process and sandbox tiers' code (the child's launch and channel,
 * bubblewrap's arguments, the network proxy) loads the first time a tool
 * needs it, not with toolpool: an executor whose tools all run in the
 * worker tier never loads it. One fresh process records what its main
 * thread resolves (test/fixtures/lazy-tiers/loaded-modules.ts).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { fixture } from './support/executors.ts';

describe('tiers load on first use', () => {
  test('a worker-tier executor loads no process or sandbox tier module; a process-tier tool loads them then', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', fixture('lazy-tiers/loaded-modules.ts')], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    const { worker, process: inProcess } = JSON.parse(out) as Record<string, { isError: boolean; modules: string[] }>;
    expect(worker!.isError).toBe(false);
    expect(worker!.modules).toContain('worker/pool-set.ts');
    // Only the option checks' small modules (a net list's syntax, a sandbox user's access, a hint's text) load with it.
    const checks = ['sandbox/net-allowlist.ts', 'sandbox/sandbox-net-hint.ts', 'sandbox/sandbox-user.ts'];
    const tierCode = worker!.modules.filter((file) => /^(process|sandbox)\//.test(file) && !checks.includes(file));
    expect(tierCode).toEqual([]);
    // The same process, then a tool in the process tier: the call runs, and its tier's code was loaded for it.
    expect(inProcess!.isError).toBe(false);
    expect(inProcess!.modules).toEqual(expect.arrayContaining(['process/process-tier.ts', 'process/tool-process.ts']));
  });
});
