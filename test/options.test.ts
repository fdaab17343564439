import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { createExecutor as create, defineTool } from '../src/index.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

const tool = (extra: Record<string, unknown>) =>
  ({ name: 't', description: 'd', parameters: Type.Object({}), execute: () => ({ content: [] }), ...extra }) as never;

describe('createExecutor options are checked by the options schema', () => {
  test('an unknown option is refused with the list of known ones', async () => {
    await expect(create({ tools: [], bogus: 1 } as never)).rejects.toThrow(
      'createExecutor: unknown option "bogus"; the known options are tools, toolExecution, coerceArguments, beforeToolCall, afterToolCall, onElicit, host, limits, toolLimits, workers, isolation, permissions, env, remote, ledger, mcpServers',
    );
  });

  test.each([
    [{ toolLimit: {} }, 'unknown option "toolLimit"; did you mean "toolLimits"? the known options are'],
    [{ isolaton: 'process' }, 'unknown option "isolaton"; did you mean "isolation"? the known options are'],
    [{ coerce: false }, 'unknown option "coerce"; did you mean "coerceArguments"? the known options are'],
    [{ timeoutMs: 5 }, 'unknown option "timeoutMs"; did you mean "limits.timeoutMs"? the known options are'],
    [
      { workers: { maxx: 2 } },
      'unknown option "workers.maxx"; did you mean "workers.max"? the known options of workers are',
    ],
  ])('an unknown option near a known one suggests it, as the CLI does: %j', async (options, text) => {
    await expect(create({ tools: [], ...options } as never)).rejects.toThrow(text);
  });

  test("an unknown nested option names its parent and the parent's known options", async () => {
    await expect(create({ tools: [], workers: { maximum: 2 } } as never)).rejects.toThrow(
      'unknown option "workers.maximum"; the known options of workers are min, max, idleTimeoutMs, loadTimeoutMs',
    );
  });

  test('every problem is named in one message, with the value received', async () => {
    const error = await create({ tools: [], toolExecution: 'fast', limits: { timeoutMs: Number.NaN } } as never).catch(
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      'createExecutor: option toolExecution must be "parallel" or "sequential" (got "fast"); option limits.timeoutMs must be a positive number (got null)',
    );
  });

  test('a union is reported once, as the union, not once per branch', async () => {
    await expect(create({ tools: [], permissions: { net: 'yes' } } as never)).rejects.toThrow(
      /^createExecutor: option permissions\.net must be true, false or an array of "host:port" \(got "yes"\)$/,
    );
    await expect(create({ tools: [], permissions: { fsRead: [''] } })).rejects.toThrow(
      'option permissions.fsRead[0] must be a non-empty path (got "")',
    );
  });

  test('options as a non-object and a missing tools array say what is expected', async () => {
    await expect(create(null as never)).rejects.toThrow(
      'createExecutor: option (options) must be an object with a tools array (got null)',
    );
    await expect(create({} as never)).rejects.toThrow(
      'createExecutor: option tools must be an array of module paths, file URLs or defineTool() objects (it is missing)',
    );
  });

  test('valid options with every key given are accepted', async () => {
    const executor = await createExecutor({
      tools: [],
      toolExecution: 'sequential',
      beforeToolCall: () => undefined,
      afterToolCall: () => undefined,
      host: { f: () => 1 },
      limits: { timeoutMs: 1_000, maxMemoryMb: 64, maxResultBytes: 1024, abortGraceMs: 100 },
      workers: { min: 0, max: 1, idleTimeoutMs: 0, loadTimeoutMs: 5_000 },
      isolation: 'worker',
      permissions: { fsRead: ['.'], fsWrite: [] },
      env: { TZ: 'UTC' },
    });
    expect(executor.definitions).toEqual([]);
  });
});

describe('tool definitions are checked by the same schema', () => {
  test('an inline tool with an unknown option is refused with the known ones', async () => {
    await expect(create({ tools: [tool({ timeout: 5 })] })).rejects.toThrow(
      'Tool inline tool "t" is invalid: unknown option "timeout"; the known options are name, description, parameters, label, executionMode, prepareArguments, execute, limits, isolation, concurrency, needsApproval',
    );
  });

  test('a module tool with an unknown option is refused, naming the module', async () => {
    await expect(create({ tools: [fixture('unknown-tool-option.mjs')] })).rejects.toThrow(
      /Tool module .*unknown-tool-option\.mjs is invalid: unknown option "timeout"; the known options are name, description/,
    );
  });

  test('wrong field values name the field, what it must be and what was received', async () => {
    await expect(
      create({ tools: [tool({ executionMode: 'fast', limits: { timeoutMs: 0 }, needsApproval: 'maybe' })] }),
    ).rejects.toThrow(
      'Tool inline tool "t" is invalid: "executionMode" must be "parallel" or "sequential" (got "fast"); "limits.timeoutMs" must be a positive number (got 0); "needsApproval" must be true, false or a function (args) => boolean (got "maybe")',
    );
    await expect(create({ tools: [tool({ description: undefined })] })).rejects.toThrow(
      '"description" must be a string (it is missing)',
    );
  });

  test('the options other tiers and features add are accepted: concurrency, needsApproval, isolation', async () => {
    const executor = await createExecutor({
      tools: [
        defineTool({
          name: 'ok',
          description: 'd',
          parameters: Type.Object({}),
          concurrency: 4,
          needsApproval: () => false,
          limits: { timeoutMs: undefined },
          execute: () => ({ content: [{ type: 'text', text: 'ran' }] }),
        } as never),
      ],
    });
    const { results } = await executor.executeBatch([call('1', 'ok')]);
    expect(textOf(results[0]!)).toBe('ran');
    await expect(create({ tools: [tool({ concurrency: 1.5 })] })).rejects.toThrow(
      '"concurrency" must be an integer from 1 to 256 (got 1.5)',
    );
  });
});

test('the message stays bounded: ten problems named, then how many more; long names cut', async () => {
  const options: Record<string, unknown> = { tools: [] };
  for (let i = 0; i < 5_000; i++) options[`bogus${i}`] = i;
  options['x'.repeat(100_000)] = 1;
  const error = (await create(options as never).catch((e: Error) => e)) as Error;
  expect(error.message).toMatch(/unknown option "bogus9"; .*; and 4991 more problems$/);
  expect(error.message.length).toBeLessThan(5_000);
});

describe("executeBatch({ limits }) can only tighten a tool's limits", () => {
  const slow = defineTool({
    name: 'slow',
    description: 'd',
    parameters: Type.Object({}),
    limits: { timeoutMs: 300 },
    execute: (_args, ctx) =>
      new Promise<never>((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error('stopped'))),
      ),
  });

  test('a lower timeout applies, a higher one is ignored', async () => {
    const executor = await createExecutor({ tools: [slow] });
    const tighter = await executor.executeBatch([call('a', 'slow')], { limits: { timeoutMs: 50 } });
    expect(textOf(tighter.results[0]!)).toMatch(/timed out after 50 ms/);
    const looser = await executor.executeBatch([call('b', 'slow')], { limits: { timeoutMs: 60_000 } });
    expect(textOf(looser.results[0]!)).toMatch(/timed out after 300 ms/);
  });

  test.each([
    [{ timeoutMs: -1 }, 'executeBatch: option limits .timeoutMs must be a positive number'],
    [
      { timeout: 5 },
      'executeBatch: option limits has an unknown limit "timeout"; the limits are timeoutMs, maxMemoryMb, maxResultBytes, abortGraceMs',
    ],
    [7, 'executeBatch: option limits must be an object of limits'],
  ])('%j is refused', async (limits, message) => {
    const executor = await createExecutor({ tools: [slow] });
    await expect(executor.executeBatch([call('c', 'slow')], { limits: limits as never })).rejects.toThrow(message);
  });
});
