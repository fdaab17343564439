import { describe, expect, test } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.ts';
import type { RunOutcome } from '../../src/core/runner.ts';
import { processLauncher, type ChildLauncher } from '../../src/isolation/process/child-launcher.ts';
import { ProcessTier } from '../../src/isolation/process/process-tier.ts';
import { toRunnableModule } from '../../src/isolation/worker/module-compiler.ts';
import { fixture } from '../support/executors.ts';

// A child (a tool that took over the process tier's main thread) that stops reading the host's frames and sends
// message after message that the host answers: the answers may not pile up in the host without bound.

function tierWithDeafChild() {
  let launches = 0;
  const launcher: ChildLauncher = {
    name: 'fake',
    launch(spec) {
      if (launches++ >= 1) return processLauncher.launch(spec);
      const flags = spec.nodeArgs.slice(0, -1);
      return processLauncher.launch({
        ...spec,
        nodeArgs: [...flags, fixture('process-tier/fake-child.mjs')],
        env: { ...spec.env, TOOLPOOL_FAKE_MODE: 'elicit-flood-deaf', TOOLPOOL_FAKE_FLOOD_MS: '150000' },
      });
    },
  };
  return new ProcessTier({
    minWorkers: 1,
    maxWorkers: 1,
    idleTimeoutMs: 5_000,
    loadTimeoutMs: 1_000,
    env: {},
    execArgv: [],
    hostFunctions: {},
    defaultMemoryMb: 512,
    launcher,
  });
}

describe('process tier: a child that does not read its channel', () => {
  test('a flood of questions it never reads the answers of does not grow the host without bound', async () => {
    const tier = tierWithDeafChild();
    const module = await toRunnableModule(fixture('probe.ts'));
    const limits = {
      ...DEFAULT_LIMITS,
      maxMemoryMb: 512,
      // The flood goes on until the host ends it; on a loaded machine the unread replies took over 12 s to reach the
      // bound, so the call's own deadline (and the host's watchdog after it) stays well out of the way.
      timeoutMs: 120_000,
      abortGraceMs: 100,
      maxResultBytes: 1 << 20,
    };
    const base = process.memoryUsage();
    let peak = 0;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peak = Math.max(peak, now.external + now.arrayBuffers - base.external - base.arrayBuffers);
    }, 20);
    try {
      const outcome: RunOutcome = await tier.execute(
        { callId: 'c', args: { action: 'ok', tag: 'x' }, limits, onUpdate: () => {} },
        { module, source: module },
      );
      expect(outcome.ok).toBe(false);
      expect(peak).toBeLessThan(48 * 1024 * 1024);
      expect(outcome.ok ? '' : outcome.error).toMatch(/replies unread/);
    } finally {
      clearInterval(sampler);
      await tier.close();
    }
  }, 240_000);
});
