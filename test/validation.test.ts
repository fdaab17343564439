import { Type } from '@sinclair/typebox';
import { isMainThread } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { defineTool } from '../src/index.ts';
import { call, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** Echoes the arguments `execute` received, so a test sees exactly what validation handed over. */
const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: Type.Object({
    count: Type.Optional(Type.Number()),
    whole: Type.Optional(Type.Integer()),
    flag: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ minLength: 2 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  }),
  execute: (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }], details: args }),
});

async function run(args: Record<string, unknown> | string) {
  const executor = await createExecutor({ tools: [echo] });
  const { results } = await executor.executeBatch([call('1', 'echo', args)]);
  return results[0]!;
}

describe('argument validation and coercion (S3, S4)', () => {
  test.each([
    ['"3" for a number', { count: '3' }, { count: 3 }],
    ['"2.5" for a number', { count: '2.5' }, { count: 2.5 }],
    ['"7" for an integer', { whole: '7' }, { whole: 7 }],
    ['"true" for a boolean', { flag: 'true' }, { flag: true }],
    ['"false" for a boolean', { flag: 'false' }, { flag: false }],
  ])('coerces %s', async (_case, args, expected) => {
    const result = await run(args);
    expect(result.isError).toBe(false);
    expect(result.details).toEqual(expected);
  });

  test('a value that cannot be coerced is an error result naming the field and what was received', async () => {
    const result = await run({ count: 'three' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('count: must be a number (got "three")');
    expect(textOf(result)).toContain('Received arguments: {"count":"three"}');
  });

  test('every wrong field is named at once, and the tool does not run', async () => {
    let ran = false;
    const strict = defineTool({
      ...echo,
      name: 'strict',
      parameters: Type.Object({
        query: Type.String({ minLength: 1 }),
        limit: Type.Integer({ maximum: 50 }),
        mode: Type.Union([Type.Literal('a'), Type.Literal('b')]),
      }),
      execute: () => {
        ran = true;
        return { content: [] };
      },
    });
    const executor = await createExecutor({ tools: [strict] });
    const { results } = await executor.executeBatch([call('1', 'strict', { query: '', limit: 99, extra: 1 })]);
    const text = textOf(results[0]!);
    expect(results[0]!.isError).toBe(true);
    expect(text).toContain('query: must NOT have fewer than 1 characters');
    expect(text).toContain('limit: must be <= 50');
    expect(text).toContain('mode: is required but missing');
    expect(ran).toBe(false);
  });

  test('arguments given as a JSON string are parsed', async () => {
    const result = await run('{"count":"4","flag":"true"}');
    expect(result.details).toEqual({ count: 4, flag: true });
  });

  test('malformed JSON arguments are an error result, not an exception', async () => {
    const result = await run('{"count": 4,');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/arguments for tool "echo" are not valid JSON/);
    expect(textOf(result)).toContain('{"count": 4,');
  });

  test('arguments that are JSON but not an object are an error result', async () => {
    const result = await run('[1,2]');
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/must be a JSON object/);
  });

  test("the caller's arguments object is not changed by coercion", async () => {
    const args = { count: '3' };
    await run(args);
    expect(args).toEqual({ count: '3' });
  });
});

describe('prepareArguments (S5)', () => {
  test('runs before validation and can fill what the model left out', async () => {
    const seen: unknown[] = [];
    const tool = defineTool({
      ...echo,
      name: 'prep',
      parameters: Type.Object({ query: Type.String(), limit: Type.Integer() }),
      prepareArguments: (raw) => {
        seen.push({ ...raw });
        return { limit: 10, ...raw };
      },
      execute: (args) => ({ content: [], details: args }),
    });
    const executor = await createExecutor({ tools: [tool] });
    const { results } = await executor.executeBatch([call('1', 'prep', { query: 'q' })]);
    expect(seen).toEqual([{ query: 'q' }]);
    expect(results[0]!.isError).toBe(false);
    expect(results[0]!.details).toEqual({ query: 'q', limit: 10 });
  });

  test('of a module tool runs in a worker, not on the main thread', async () => {
    const executor = await createExecutor({ tools: [fixture('prepare-where.ts')] });
    const { results } = await executor.executeBatch([call('1', 'prepare_where', {})]);
    expect(results[0]!.isError).toBe(false);
    expect(results[0]!.details).toEqual({ preparedOnMainThread: false, executedOnMainThread: false });
    expect(isMainThread).toBe(true);
  });

  test('a prepareArguments that never returns is stopped at the timeout (module tool)', async () => {
    // The prepare deadline is the tool's timeout plus the load timeout (a worker may still have to import the
    // module); the load timeout leaves room for a worker to boot on a loaded machine (700 ms did not, on CI).
    const executor = await createExecutor({
      tools: [fixture('slow-prepare.ts'), fixture('probe.ts')],
      workers: { loadTimeoutMs: 3_000 },
    });
    const { results } = await executor.executeBatch([call('1', 'slow_prepare', {})]);
    expect(textOf(results[0]!)).toMatch(
      /^prepareArguments of tool "slow_prepare" failed: it did not finish within 3300 ms/,
    );
    const next = await executor.executeBatch([call('2', 'probe', { action: 'ok' })]);
    expect(textOf(next.results[0]!)).toBe('ok');
  });

  test('a prepareArguments that throws is an error result', async () => {
    const tool = defineTool({
      ...echo,
      name: 'badprep',
      prepareArguments: () => {
        throw new Error('cannot prepare');
      },
    });
    const executor = await createExecutor({ tools: [tool] });
    const { results } = await executor.executeBatch([call('1', 'badprep', {})]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toBe('prepareArguments of tool "badprep" failed: cannot prepare');
  });
});

describe('schema formats', () => {
  const mailer = (format: string) =>
    defineTool({
      name: 'mail',
      description: 'mail',
      parameters: Type.Object({ to: Type.String({ format }), at: Type.Optional(Type.String({ format: 'date-time' })) }),
      execute: ({ to }) => ({ content: [{ type: 'text', text: `sent to ${to}` }] }),
    });

  test('email, date-time and the other standard formats are checked', async () => {
    const executor = await createExecutor({ tools: [mailer('email')] });
    const { results } = await executor.executeBatch([
      call('bad', 'mail', { to: 'not-an-address', at: 'yesterday' }),
      call('good', 'mail', { to: 'a@example.com', at: '2026-12-01T09:00:00Z' }),
    ]);
    expect(results[0]!.isError).toBe(true);
    expect(textOf(results[0]!)).toMatch(/to: must match format "email"\n {2}- at: must match format "date-time"/);
    expect(textOf(results[1]!)).toBe('sent to a@example.com');
  });

  test('a format toolpool does not know is warned about once, not on every compile', async () => {
    const warnings: string[] = [];
    const original = console.warn;
    console.warn = (...parts: unknown[]) => void warnings.push(parts.join(' '));
    try {
      await createExecutor({ tools: [mailer('toolpool-test-phone')] });
      await createExecutor({ tools: [mailer('toolpool-test-phone')] });
    } finally {
      console.warn = original;
    }
    const about = warnings.filter((text) => text.includes('toolpool-test-phone'));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatch(/^toolpool: unknown format "toolpool-test-phone" .*not checked/);
  });
});
