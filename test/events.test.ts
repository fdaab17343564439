import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { OrderedEmitter } from '../src/core/events.ts';
import { Agent, createExecutor, defineTool, scriptedModel } from '../src/index.ts';
import { call } from './support/executors.ts';
import { captureWarnings, restoreWarningsAfterEach } from './support/warnings.ts';

restoreWarningsAfterEach();

describe('OrderedEmitter', () => {
  test('sync listeners get each event at once; once a listener is async, later events wait their turn', async () => {
    const emitter = new OrderedEmitter<number>();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    emitter.subscribe((n) => void log.push(`a${n}`));
    emitter.subscribe(async (n) => {
      if (n === 2) await gate;
      log.push(`b${n}`);
    });
    void emitter.emit(1);
    expect(log).toEqual(['a1', 'b1']); // delivered at once: nothing was waiting
    const second = emitter.emit(2);
    const third = emitter.emit(3);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual(['a1', 'b1', 'a2']); // 3 waits behind 2's slow listener
    release();
    await Promise.all([second, third]);
    expect(log).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
  });

  test('a listener that throws or rejects is reported and the others still run', async () => {
    const errors: unknown[] = [];
    const emitter = new OrderedEmitter<string>((error) => errors.push(error));
    const seen: string[] = [];
    emitter.subscribe(() => {
      throw new Error('sync boom');
    });
    emitter.subscribe(async () => {
      throw new Error('async boom');
    });
    emitter.subscribe((event) => void seen.push(event));
    await emitter.emit('x');
    await emitter.emit('y');
    expect(seen).toEqual(['x', 'y']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync boom', 'async boom', 'sync boom', 'async boom']);
  });
});

describe('a listener that throws, by default', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'x',
    parameters: Type.Object({}),
    execute: () => ({ content: [] }),
  });

  test('executor.subscribe: reported once, naming the line that subscribed it, however many events it fails', async () => {
    const warnings = captureWarnings();
    const executor = await createExecutor({ tools: [echo] });
    try {
      executor.subscribe(() => {
        throw new Error('the UI is gone');
      }); // <- this line is where the report points
      executor.subscribe(async () => {
        throw new Error('the log is full');
      });
      await executor.executeBatch([call('1', 'echo'), call('2', 'echo')]);
      await executor.executeBatch([call('3', 'echo')]);
    } finally {
      await executor.close();
    }
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /^toolpool: an event listener threw: the UI is gone \(the listener was subscribed at .*test\/events\.test\.ts:\d+:\d+\)\. Further errors of this listener are not reported; catch them in the listener to see each one\.$/,
    );
    expect(warnings[1]).toMatch(
      /^toolpool: an event listener threw: the log is full \(the listener was subscribed at .*test\/events\.test\.ts:\d+:\d+\)/,
    );
    expect(warnings.join('\n')).not.toMatch(/src\/(events|executor)\.ts/);
  });

  test('agent.subscribe: the same, and the run goes on', async () => {
    const warnings = captureWarnings();
    const executor = await createExecutor({ tools: [echo] });
    try {
      const agent = new Agent({
        model: scriptedModel([{ toolCalls: [{ name: 'echo', arguments: {} }] }, { text: 'done' }]),
        executor,
      });
      agent.subscribe(() => {
        throw new Error('render failed');
      });
      const added = await agent.prompt('go');
      expect(added.at(-1)).toMatchObject({ role: 'assistant' });
    } finally {
      await executor.close();
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^toolpool: an event listener threw: render failed \(the listener was subscribed at .*test\/events\.test\.ts:\d+:\d+\)/,
    );
  });
});
