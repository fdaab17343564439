/**
 * Which tiers are walls (docs/isolation.md). A thread shares its process
 * with the host, so in the worker tier a tool reaches the host's main thread
 * through a nested worker's inspector and reads every byte of the process
 * (the host's and other modules' calls) through /proc/self/mem: these cases
 * assert that documented limit — they check that the attack still works, so
 * that the day it stops working the docs are corrected too (README
 * "Limits and isolation", the first table: worker tier, "no wall"; and
 * docs/isolation.md). In the process tier, under `permissions` and in the
 * sandbox the same attacks must fail. Each case runs a fresh host process
 * (test/fixtures/walls/host.ts) that holds a secret on its main thread and
 * runs another module's call with a secret argument beside the attack.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import { fixture } from '../support/executors.ts';

const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);

interface Seen {
  hostSecret: string;
  argumentSecret: string;
  attack: string;
  attackIsError: boolean;
  victim: string;
}

function runHost(isolation: string, target: 'nested-inspector' | 'scan-memory', permissions = false): Seen {
  const host = spawnSync(
    process.execPath,
    ['--import', 'tsx', fixture('walls/host.ts'), isolation, target, ...(permissions ? ['permissions'] : [])],
    {
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const last = host.stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{'))
    throw new Error(
      `the host printed no result (status ${host.status}, signal ${host.signal}): ${host.stderr.slice(-2000)}`,
    );
  return JSON.parse(last) as Seen;
}

describe('worker tier: no wall (the documented limit; README "Limits and isolation", docs/isolation.md)', () => {
  test("a nested worker's inspector session on the main thread evaluates code on the host and reads its secret", () => {
    const seen = runHost('worker', 'nested-inspector');
    // The limit as documented: the attack works. If this fails, the worker tier got harder to escape: update the docs.
    expect(seen.attack).toBe(`evaluated: ${seen.hostSecret}`);
    expect(seen.victim).toBe('held 2');
  }, 150_000);

  test("scanning /proc/self/mem finds another module's call arguments", () => {
    const seen = runHost('worker', 'scan-memory');
    expect(seen.attack).toMatch(/^scanned \d+ MB; found: /);
    expect(seen.attack.split('found: ')[1]!.split(',')).toContain(seen.argumentSecret);
  }, 150_000);
});

const walls: Array<[string, string, boolean]> = [
  ['process tier', 'process', false],
  ['process tier with permissions', 'process', true],
  // On Node 22+ a module tool of the worker tier with permissions runs in the process tier; on Node 20 in permission-restricted threads.
  ['worker tier with permissions', 'worker', true],
  ...(sandboxWorks ? ([['sandbox tier', 'sandbox', false]] as Array<[string, string, boolean]>) : []),
];

describe.each(walls)('%s: a wall against both attacks', (_name, isolation, permissions) => {
  test("a nested worker's inspector reaches no secret of the host", () => {
    const seen = runHost(isolation, 'nested-inspector', permissions);
    expect(seen.attack).not.toContain(seen.hostSecret);
    // Either no nested worker or inspector at all, or a session on the child's own main thread, where the host's secret does not exist.
    expect(seen.attack).toMatch(/^(refused: |evaluated: undefined$)/);
    expect(seen.victim).toBe('held 2');
  }, 150_000);

  test("a scan of its process memory finds no other module's arguments", () => {
    const seen = runHost(isolation, 'scan-memory', permissions);
    expect(seen.attack).not.toContain(seen.argumentSecret);
    expect(seen.attack).toMatch(/^(refused: |scanned \d+ MB; found: nothing$)/);
    expect(seen.victim).toBe('held 2');
  }, 150_000);
});
