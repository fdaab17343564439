import { describe, expect, test } from 'vitest';
import { checkToolInfo } from '../../src/tools/tool-info.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

/**
 * Hostile definitions: a tool module's definition is read in a worker, but
 * the host acts on it (picks the tier and limits, compiles the schema on
 * its own thread). None of it may give the tool more than the host allows.
 */
const createExecutor = useExecutors();

describe('hostile definitions', () => {
  test('a tool cannot lower the isolation the host chose', async () => {
    const executor = await createExecutor({
      tools: [fixture('hostile/definition-downgrade.mjs')],
      isolation: 'process',
    });
    const [result] = (await executor.executeBatch([call('1', 'definition_downgrade')])).results;
    expect(textOf(result!)).toBe('ran');
    expect((result!.details as { pid: number }).pid).not.toBe(process.pid);
  });

  test("a tool's own limits only tighten the host's: no bigger result, no longer run", async () => {
    const executor = await createExecutor({
      tools: [fixture('hostile/definition-greedy-limits.mjs')],
      limits: { maxResultBytes: 1_000, timeoutMs: 300, abortGraceMs: 100 },
    });
    const { results } = await executor.executeBatch([
      call('big', 'definition_greedy_limits'),
      call('long', 'definition_greedy_limits', { action: 'linger' }),
    ]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/over the limit maxResultBytes \(1000 bytes\)/);
    expect(results[1]!.isError).toBe(true);
    expect(textOf(results[1]!)).toMatch(/timed out after 300 ms/);
  });

  test('a backtracking pattern in a module schema cannot stall the host', async () => {
    const executor = await createExecutor({ tools: [fixture('hostile/definition-redos.mjs')] });
    const { results } = await executor.executeBatch([
      call('1', 'definition_redos'),
      call('2', 'definition_redos', { s: 'aaaa' }),
    ]);
    // With a backtracking engine the default alone takes minutes (the test times out); RE2 answers at once.
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/s: must match pattern/);
    expect(textOf(results[1]!)).toBe('ran');
  });

  test('a module pattern RE2 cannot run is refused at registration, saying why', async () => {
    await expect(createExecutor({ tools: [fixture('hostile/definition-lookahead.mjs')] })).rejects.toThrow(
      /cannot run in linear time.*lookaround/,
    );
  });

  test('a megabyte of description is refused with a short message', async () => {
    const failure = await createExecutor({ tools: [fixture('hostile/definition-huge-description.mjs')] }).catch(
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toMatch(/description.*at most 64 KiB/);
    expect((failure as Error).message.length).toBeLessThan(2_000);
  });

  test('a heap too small for any worker is refused instead of leaving calls waiting', async () => {
    await expect(createExecutor({ tools: [fixture('hostile/definition-tiny-heap.mjs')] })).rejects.toThrow(
      /maxMemoryMb.*>= 16/,
    );
  });

  test('the host re-checks what a worker reports: a schema 200,000 levels deep is refused without overflowing the stack', async () => {
    let parameters: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200_000; i++) parameters = { type: 'object', properties: { a: parameters } };
    const info = {
      name: 'deep',
      description: '',
      parameters,
      executionMode: 'parallel',
      limits: {},
      hasPrepare: false,
      hasExecute: true,
    };
    expect(() => checkToolInfo(info, 'module deep.mjs')).toThrow(/nests deeper than 64 levels/);
  });

  test('the host re-checks what a worker reports: unknown fields and wrong types are refused', async () => {
    const info = {
      name: 'x',
      description: 1,
      parameters: {},
      executionMode: 'parallel',
      limits: { timeoutMs: -1 },
      hasPrepare: 'yes',
      hasExecute: true,
      evil: 1,
    };
    let message = '';
    try {
      checkToolInfo(info, 'module x.mjs');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/evil/);
    expect(message).toMatch(/"description" must be a string/);
    expect(message).toMatch(/"hasPrepare" must be a boolean/);
  });
});
