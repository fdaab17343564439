import { describe, expect, test } from 'vitest';
import { OrderedEmitter } from '../src/events.ts';

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
