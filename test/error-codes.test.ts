/**
 * Typed errors: the code table, the brand across copies and realms, the
 * CommonJS stub, and one errorCode per way a call can fail (tool_end and
 * the result message), including a tool that tries to pass its own failure
 * off as one of the host's.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import {
  ERROR_CODES,
  ToolpoolError,
  ToolpoolTypeError,
  defineTool,
  isToolpoolError,
  type ToolEndEvent,
  type ToolErrorCode,
} from '../src/index.ts';
import { reportedCode } from '../src/core/error-codes.ts';
import { refuseCalls } from '../src/agent/refused-calls.ts';
import type { BatchOptions, ExecutorOptions, ToolCall } from '../src/index.ts';
import { call, fixture, recordEvents, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();
const root = fileURLToPath(new URL('../', import.meta.url));

describe('ToolpoolError', () => {
  test('carries its code and cause; the TypeError flavour is a TypeError and a ToolpoolError', () => {
    const cause = new Error('under');
    const error = new ToolpoolError('TOOLPOOL_ERR_CLOSED', 'closed', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: 'TOOLPOOL_ERR_CLOSED', message: 'closed', name: 'ToolpoolError', cause });
    const typeError = new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', 'bad');
    expect(typeError).toBeInstanceOf(TypeError);
    expect(typeError).toBeInstanceOf(ToolpoolError);
    expect(isToolpoolError(typeError)).toBe(true);
    expect(new Error('plain')).not.toBeInstanceOf(ToolpoolError);
  });

  test('a thrown option error has a code and stays a TypeError', async () => {
    const thrown = await createExecutor({ tools: [], nonsense: true } as unknown as ExecutorOptions).catch(
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(TypeError);
    expect(isToolpoolError(thrown) && thrown.code).toBe('TOOLPOOL_ERR_INVALID_OPTION');
  });

  test('isToolpoolError holds for an error of another copy of toolpool and of another realm (the Symbol.for brand)', async () => {
    const copy = (await import(
      /* @vite-ignore */ new URL('../src/core/error-codes.ts?another-copy', import.meta.url).href
    )) as typeof import('../src/core/error-codes.ts');
    expect(copy.ToolpoolError).not.toBe(ToolpoolError);
    const fromCopy = new copy.ToolpoolError('TOOLPOOL_ERR_CLOSED', 'x');
    expect(isToolpoolError(fromCopy)).toBe(true);
    expect(fromCopy).toBeInstanceOf(ToolpoolError);
    // Another realm: a vm context has its own Error, the same symbol registry.
    const fromRealm = runInNewContext(
      "class E extends Error {}; Object.defineProperty(E.prototype, Symbol.for('toolpool.error'), { value: true }); const e = new E('x'); e.code = 'TOOLPOOL_ERR_CLOSED'; e",
    ) as unknown;
    expect(fromRealm instanceof Error).toBe(false);
    expect(isToolpoolError(fromRealm)).toBe(true);
  });

  test('an error that lost its brand on the way (a structured clone) is recognised by its code, and only a thrown code counts', () => {
    const error = new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', 'x');
    const clone = structuredClone(error) as { code?: unknown };
    // Node 20-26 keep only name, message and stack of an Error: the brand (and `code`) are gone.
    expect(isToolpoolError(clone)).toBe(clone.code === 'TOOLPOOL_ERR_MODULE_LOAD');
    // What crosses with its code (as a worker's or child's error does when toolpool copies it) is recognised.
    expect(isToolpoolError(Object.assign(new Error('x'), { code: 'TOOLPOOL_ERR_MODULE_LOAD' }))).toBe(true);
    expect(isToolpoolError(Object.assign(new Error('x'), { code: 'TIMEOUT' }))).toBe(false);
    expect(isToolpoolError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isToolpoolError(Object.assign(new Error('x'), { code: 'toString' }))).toBe(false);
    expect(
      isToolpoolError(
        new Proxy(
          {},
          {
            get: () => {
              throw new Error('trap');
            },
          },
        ),
      ),
    ).toBe(false);
    expect(isToolpoolError(null)).toBe(false);
  });

  test('the CommonJS stub throws with its code and the brand', () => {
    const require = createRequire(import.meta.url);
    let thrown: unknown;
    try {
      require(`${root}cjs/require-error.cjs`);
    } catch (error) {
      thrown = error;
    }
    expect(isToolpoolError(thrown)).toBe(true);
    expect((thrown as ToolpoolError).code).toBe('TOOLPOOL_ERR_REQUIRE_ESM');
  });

  test('a tool cannot report a host code for its own failure: only codes about the call itself are kept', () => {
    expect(reportedCode('RESULT_TOO_LARGE')).toBe('RESULT_TOO_LARGE');
    for (const forged of [
      'NOT_APPROVED',
      'BLOCKED',
      'CLOSED',
      'NOT_FOUND',
      'TOOLPOOL_ERR_CLOSED',
      undefined,
      42,
      '__proto__',
    ])
      expect(reportedCode(forged)).toBe('THREW');
  });
});

describe('src throws ToolpoolErrors', () => {
  test('at most 10 plain throws are left in src, each with a comment saying why', () => {
    const files = execFileSync('git', ['ls-files', 'src'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((file) => file.endsWith('.ts'));
    const plain: string[] = [];
    for (const file of files) {
      const lines = readFileSync(`${root}${file}`, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (!/throw new (Error|TypeError|RangeError)\(/.test(line)) return;
        plain.push(`${file}:${index + 1}`);
        const above = lines.slice(Math.max(0, index - 2), index).some((text) => text.trim().startsWith('//'));
        expect(
          above,
          `${file}:${index + 1} needs a comment (in the two lines above) saying why it is a plain throw`,
        ).toBe(true);
      });
    }
    expect(plain.length).toBeLessThanOrEqual(10);
  });
});

const tool = (name: string, extra: Record<string, unknown> = {}) =>
  defineTool({
    name,
    description: name,
    parameters: Type.Object({ n: Type.Optional(Type.Number()) }),
    execute: () => ({ content: [{ type: 'text', text: 'ok' }] }),
    ...extra,
  } as Parameters<typeof defineTool>[0]);

interface Row {
  code: ToolErrorCode;
  options?: Partial<ExecutorOptions>;
  calls?: ToolCall[];
  batch?: BatchOptions;
}

const aborted = new AbortController();
aborted.abort();

const rows: Row[] = [
  { code: 'NOT_FOUND', calls: [call('c', 'missing')] },
  { code: 'INVALID_ARGUMENTS', calls: [call('c', 'plain', { n: 'not a number' })] },
  {
    code: 'PREPARE_FAILED',
    options: {
      tools: [
        tool('plain', {
          prepareArguments: () => {
            throw new Error('no');
          },
        }),
      ],
    },
  },
  { code: 'DUPLICATE_CALL_ID', calls: [call('c', 'plain'), call('c', 'plain')] },
  { code: 'NOT_APPROVED', options: { tools: [tool('plain', { needsApproval: true })] } },
  {
    code: 'REJECTED',
    options: { tools: [tool('plain', { needsApproval: true })] },
    batch: { approvals: { rejected: { c: 'no' } } },
  },
  { code: 'BLOCKED', options: { beforeToolCall: () => ({ block: true }) } },
  { code: 'STOPPED', options: { beforeToolCall: () => ({ stop: true }) } },
  {
    code: 'HOOK_FAILED',
    options: {
      beforeToolCall: () => {
        throw new Error('hook');
      },
    },
  },
  { code: 'FAILED', options: { afterToolCall: () => ({ isError: true }) } },
  { code: 'ABORTED', batch: { signal: aborted.signal } },
  {
    code: 'TIMEOUT',
    options: {
      tools: [
        tool('plain', {
          limits: { timeoutMs: 50 },
          execute: (_args: unknown, ctx: { signal: AbortSignal }) =>
            new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))),
        }),
      ],
    },
  },
  { code: 'INVALID_RESULT', options: { tools: [tool('plain', { execute: () => ({ nothing: true }) })] } },
  // A tool that throws text and a code of the host's own still gets THREW: the code is the host's word, never the tool's.
  {
    code: 'THREW',
    options: {
      tools: [
        tool('plain', {
          execute: () => {
            throw Object.assign(new Error('Tool timed out after 5 ms (limit timeoutMs).'), { code: 'TIMEOUT' });
          },
        }),
      ],
    },
  },
  // The worker tier: a throw, a crash, a result over the limit, the memory limit.
  { code: 'THREW', options: { tools: [fixture('probe.ts')] }, calls: [call('c', 'probe', { action: 'throw' })] },
  { code: 'CRASHED', options: { tools: [fixture('probe.ts')] }, calls: [call('c', 'probe', { action: 'exit' })] },
  {
    code: 'RESULT_TOO_LARGE',
    options: { tools: [fixture('probe.ts')], limits: { maxResultBytes: 1024 } },
    calls: [call('c', 'probe', { action: 'ok', tag: 'x'.repeat(4096) })],
  },
  {
    code: 'MEMORY_LIMIT',
    options: { tools: [fixture('hostile/heap-bomb.ts')], limits: { maxMemoryMb: 64 } },
    calls: [call('c', 'heap_bomb')],
  },
];

describe('a failed call carries its errorCode on tool_end and on its result message', () => {
  test.each(rows.map((row) => [row.code, row] as const))('%s', async (code, row) => {
    const executor = await createExecutor({ tools: [tool('plain')], ...row.options } as ExecutorOptions);
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch(row.calls ?? [call('c', 'plain')], row.batch);
    const ends = events.filter((event): event is ToolEndEvent => event.type === 'tool_end');
    const failed = ends.find((event) => event.isError)!;
    expect(failed, JSON.stringify(results)).toBeDefined();
    expect(failed.errorCode).toBe(code);
    expect(results.find((result) => result.toolCallId === failed.toolCallId && result.isError)?.errorCode).toBe(code);
    for (const event of ends.filter((end) => !end.isError)) expect(event.errorCode).toBeUndefined();
  });

  test('a success has no errorCode', async () => {
    const executor = await createExecutor({ tools: [tool('plain')] });
    const events = recordEvents(executor);
    const { results } = await executor.executeBatch([call('c', 'plain')]);
    expect(results[0]!.errorCode).toBeUndefined();
    expect(events.find((event) => event.type === 'tool_end')).not.toHaveProperty('errorCode');
  });

  test('every result code of the table is tested here once (CLOSED and CRASHED of other tiers are set where those tiers fail)', () => {
    const tested = new Set(rows.map((row) => row.code));
    const resultCodes = Object.entries(ERROR_CODES)
      .filter(([, kind]) => kind === 'result')
      .map(([code]) => code);
    expect(resultCodes.filter((code) => !tested.has(code as ToolErrorCode))).toEqual(['CLOSED']);
  });
});

/** The table of docs/errors.md, made from the doc comments of ERROR_CODES. */
function errorCodeTable(source: string): string {
  const rows = [...source.matchAll(/\/\*\* ([^*]+?) \*\/\n\s+(\w+): '(thrown|result)',/g)].map(
    ([, doc, code, kind]) => {
      const where = kind === 'thrown' ? 'thrown (`e.code`)' : '`tool_end` / result (`errorCode`)';
      return `| \`${code}\` | ${where} | ${doc!.replace(/\|/g, '\\|')} |`;
    },
  );
  return ['| Code | Where | What it means, and what to do |', '| --- | --- | --- |', ...rows].join('\n');
}

describe('docs/errors.md', () => {
  test('its table is the code table: every code, with its doc comment, in order', () => {
    const source = readFileSync(`${root}src/core/error-codes.ts`, 'utf8');
    const table = errorCodeTable(source);
    expect(table.split('\n').length - 2).toBe(Object.keys(ERROR_CODES).length);
    const page = readFileSync(`${root}docs/errors.md`, 'utf8');
    const generated = page.match(/<!-- error codes: generated[^\n]*-->\n([\s\S]*?)\n<!-- end of error codes -->/)?.[1];
    expect(generated, 'docs/errors.md: replace the table between the markers with the one below').toBe(table);
  });
});

describe('calls the Agent answers without running them', () => {
  test('carry the errorCode it gives on the result and the tool_end event', () => {
    const { results, events } = refuseCalls(
      [{ type: 'toolCall', id: 'c', name: 'plain', arguments: {} }],
      () => 'not run',
      'ABORTED',
    );
    expect(results[0]).toMatchObject({ isError: true, errorCode: 'ABORTED' });
    expect(events.at(-1)).toMatchObject({ type: 'tool_end', isError: true, errorCode: 'ABORTED' });
  });
});
