import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { defineTool } from '../src/index.ts';
import { call, deferred, fixture, textOf, useExecutors } from './support/executors.ts';

const createExecutor = useExecutors();

/** An inline tool that logs when it starts and ends, and can be held until released. */
function traced(
  name: string,
  log: string[],
  options: {
    executionMode?: 'parallel' | 'sequential';
    hold?: Promise<void>;
    onStart?: () => void;
    onDone?: () => void;
  } = {},
) {
  return defineTool({
    name,
    description: name,
    parameters: Type.Object({ tag: Type.String() }),
    ...(options.executionMode ? { executionMode: options.executionMode } : {}),
    async execute({ tag }) {
      log.push(`exec-start:${tag}`);
      options.onStart?.();
      await options.hold;
      log.push(`exec-end:${tag}`);
      options.onDone?.();
      return { content: [{ type: 'text', text: `done ${tag}` }] };
    },
  });
}

describe('batch lifecycle order (S11, S12, S13)', () => {
  test('a mixed parallel batch: prepare in source order, execute concurrently, finalize in source order', async () => {
    const log: string[] = [];
    const fastDone = deferred();
    // "slow" is held until "fast" finished, so the two finish in reverse order:
    // proof that execution overlapped, without measuring time.
    const slow = traced('slow', log, { hold: fastDone.promise });
    const fast = traced('fast', log, { onDone: () => fastDone.resolve() });
    const executor = await createExecutor({
      tools: [fixture('probe.ts'), slow, fast],
      beforeToolCall: ({ toolCall }) => {
        log.push(`before:${toolCall.id}`);
        return toolCall.id === 'blocked' ? { block: true, reason: 'not allowed here' } : undefined;
      },
      afterToolCall: ({ toolCall, isError }) => {
        log.push(`after:${toolCall.id}:${isError ? 'error' : 'ok'}`);
        return undefined;
      },
    });
    executor.subscribe((event) => {
      if (event.type !== 'tool_update') log.push(`${event.type}:${event.toolCallId}`);
    });
    const batch = await executor.executeBatch([
      call('invalid', 'probe', { action: 'no-such-action' }),
      call('blocked', 'probe', { action: 'ok' }),
      call('unknown', 'does_not_exist', {}),
      call('crash', 'probe', { action: 'exit' }),
      call('slowA', 'slow', { tag: 'slowA' }),
      call('fastB', 'fast', { tag: 'fastB' }),
    ]);

    expect(log).toEqual([
      'tool_start:invalid',
      'tool_start:blocked',
      'before:blocked',
      'tool_start:unknown',
      'tool_start:crash',
      'before:crash',
      'tool_start:slowA',
      'before:slowA',
      'tool_start:fastB',
      'before:fastB',
      'exec-start:slowA',
      'exec-start:fastB',
      'exec-end:fastB',
      'exec-end:slowA',
      'tool_end:invalid',
      'tool_end:blocked',
      'tool_end:unknown',
      'after:crash:error',
      'tool_end:crash',
      'after:slowA:ok',
      'tool_end:slowA',
      'after:fastB:ok',
      'tool_end:fastB',
    ]);
    expect(batch.results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ['invalid', true],
      ['blocked', true],
      ['unknown', true],
      ['crash', true],
      ['slowA', false],
      ['fastB', false],
    ]);
    expect(textOf(batch.results[0]!)).toMatch(/Validation failed for tool "probe"[\s\S]*action/);
    expect(textOf(batch.results[1]!)).toBe('not allowed here');
    expect(textOf(batch.results[2]!)).toMatch(/Tool "does_not_exist" not found/);
    expect(textOf(batch.results[3]!)).toMatch(/worker exited with code 7/);
    expect(batch.terminate).toBe(false);
    expect(batch.stopped).toBe(false);
  });

  test('toolExecution "sequential" runs each call fully before the next starts', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [traced('step', log)], toolExecution: 'sequential' });
    executor.subscribe((event) => void log.push(`${event.type}:${event.toolCallId}`));
    await executor.executeBatch([call('1', 'step', { tag: '1' }), call('2', 'step', { tag: '2' })]);
    expect(log).toEqual([
      'tool_start:1',
      'exec-start:1',
      'exec-end:1',
      'tool_end:1',
      'tool_start:2',
      'exec-start:2',
      'exec-end:2',
      'tool_end:2',
    ]);
  });

  test('a tool with executionMode "sequential" makes its whole batch sequential', async () => {
    const log: string[] = [];
    const executor = await createExecutor({
      tools: [traced('par', log), traced('seq', log, { executionMode: 'sequential' })],
    });
    await executor.executeBatch([
      call('1', 'par', { tag: '1' }),
      call('2', 'par', { tag: '2' }),
      call('3', 'seq', { tag: '3' }),
    ]);
    expect(log).toEqual(['exec-start:1', 'exec-end:1', 'exec-start:2', 'exec-end:2', 'exec-start:3', 'exec-end:3']);
  });

  test('without a sequential tool the same kind of batch runs concurrently', async () => {
    const log: string[] = [];
    const secondStarted = deferred();
    // The first call can only finish once the second has started: proof of overlap.
    const executor = await createExecutor({
      tools: [
        traced('first', log, { hold: secondStarted.promise }),
        traced('second', log, { onStart: () => secondStarted.resolve() }),
      ],
    });
    const batch = await executor.executeBatch([call('1', 'first', { tag: '1' }), call('2', 'second', { tag: '2' })]);
    expect(log.indexOf('exec-start:2')).toBeLessThan(log.indexOf('exec-end:1'));
    expect(batch.results.map(textOf)).toEqual(['done 1', 'done 2']);
  });

  test('worker tools of one batch run at the same time', async () => {
    const arrived: string[] = [];
    const bothHere = deferred();
    const executor = await createExecutor({
      tools: [fixture('rendezvous.ts')],
      workers: { min: 2, max: 2 },
      // Each tool waits in a host call until both have arrived: only possible if they run concurrently.
      host: {
        arrive: async (who: string) => {
          arrived.push(who);
          if (arrived.length === 2) bothHere.resolve();
          await bothHere.promise;
          return arrived.length;
        },
      },
    });
    const batch = await executor.executeBatch([
      call('a', 'rendezvous', { who: 'a' }),
      call('b', 'rendezvous', { who: 'b' }),
    ]);
    expect(batch.results.map(textOf)).toEqual(['a met 2', 'b met 2']);
  });

  test('hooks never run concurrently, even when slow and across concurrent batches', async () => {
    let active = 0;
    let maxActive = 0;
    const slowHook = async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      await new Promise((resolve) => setTimeout(resolve, 15));
      active--;
      return undefined;
    };
    const executor = await createExecutor({
      tools: [traced('t', [])],
      beforeToolCall: slowHook,
      afterToolCall: slowHook,
    });
    const calls = ['1', '2', '3'].map((id) => call(id, 't', { tag: id }));
    const [first, second] = await Promise.all([executor.executeBatch(calls), executor.executeBatch(calls)]);
    expect(maxActive).toBe(1);
    expect(first!.results.map(textOf)).toEqual(['done 1', 'done 2', 'done 3']);
    expect(second!.results.every((r) => !r.isError)).toBe(true);
  });
});
