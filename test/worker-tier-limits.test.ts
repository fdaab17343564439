import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { fixture } from './support/executors.ts';

// The README's isolation table says what the worker tier does NOT stop; this
// shows it rather than claiming it: a thread shares its process with the host.
describe('what the worker tier does not stop', () => {
  test('a tool that kills its own pid kills the host (use the process tier for that)', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fixture('kill-host-in-worker-tier.ts')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stdout).toContain('executor ready');
    expect(run.stdout).not.toContain('host survived');
    expect(run.signal).toBe('SIGKILL');
  });
});
