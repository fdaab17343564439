import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { createExecutor as create, defineTool } from '../src/index.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** An inline tool that waits `ms` and honours its signal. */
const waiter = (name: string) =>
  defineTool({
    name,
    description: 'waits',
    parameters: Type.Object({ ms: Type.Integer() }),
    async execute({ ms }, ctx) {
      await new Promise((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        ctx.signal.addEventListener('abort', () => (clearTimeout(timer), reject(ctx.signal.reason)), { once: true });
      });
      return { content: [{ type: 'text', text: `waited ${ms}` }] };
    },
  });

describe("createExecutor({ toolLimits }): the host's own limits per tool", () => {
  test("loosen the executor's limits for the tool named, and only for it", async () => {
    const executor = await createExecutor({
      tools: [waiter('slow'), waiter('quick')],
      limits: { timeoutMs: 100, abortGraceMs: 50 },
      toolLimits: { slow: { timeoutMs: 2_000 } },
    });
    const { results } = await executor.executeBatch([call('1', 'slow', { ms: 300 }), call('2', 'quick', { ms: 300 })]);
    expect(textOf(results[0]!)).toBe('waited 300');
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(/^Tool timed out after 100 ms \(limit timeoutMs\)/);
  });

  test('may tighten too, for a module tool in its worker', async () => {
    const executor = await createExecutor({
      tools: [fixture('limited-sleeper.ts')],
      toolLimits: { limited_sleeper: { timeoutMs: 50 } },
    });
    const { results } = await executor.executeBatch([call('1', 'limited_sleeper', { ms: 150 })]);
    expect(textOf(results[0]!)).toMatch(/^Tool timed out after 50 ms/);
  });

  test("a module's own limits still only tighten, now relative to the host's value for it", async () => {
    // limited_sleeper asks for 200 ms itself: the host's 5 s for it does not lift that; the host's 2 s elsewhere does not matter.
    const executor = await createExecutor({
      tools: [fixture('limited-sleeper.ts')],
      limits: { timeoutMs: 2_000 },
      toolLimits: { limited_sleeper: { timeoutMs: 5_000, abortGraceMs: 100 } },
    });
    const { results } = await executor.executeBatch([call('1', 'limited_sleeper', { ms: 400 })]);
    expect(textOf(results[0]!)).toMatch(/^Tool timed out after 200 ms/);
  });

  test('a name no tool has is refused, with the tools listed', async () => {
    await expect(
      create({ tools: [waiter('slow'), waiter('quick')], toolLimits: { slwo: { timeoutMs: 1 }, quick: {} } }),
    ).rejects.toThrow(
      'createExecutor: option toolLimits names a tool that does not exist: "slwo". The tools are slow, quick.',
    );
  });

  test('its values are checked like every option', async () => {
    await expect(create({ tools: [], toolLimits: { slow: { timeoutMs: 0, retries: 3 } } } as never)).rejects.toThrow(
      /^createExecutor: unknown option "toolLimits\.slow\.retries"; the known options of toolLimits\.slow are timeoutMs, maxMemoryMb, maxResultBytes, abortGraceMs; option toolLimits\.slow\.timeoutMs must be a positive number \(got 0\)$/,
    );
    await expect(create({ tools: [], toolLimits: [] } as never)).rejects.toThrow(
      'option toolLimits must be an object of tool name → limits (got [])',
    );
  });
});
