/**
 * The coalescing policy's one promise: the last update before a result is
 * always delivered, and before tool_end — under any load. The old design
 * sent updates and the result on different ports and lost the last update
 * under CPU load; now both travel on one ordered channel. The suite loads
 * the CPU on purpose (busy child processes) so a race would show.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ToolEvent } from '../../src/index.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const open = useExecutors();
let burners: ChildProcess[] = [];
beforeAll(() => {
  burners = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
});
afterAll(() => {
  for (const burner of burners) burner.kill('SIGKILL');
});

function lastUpdateBeforeEnd(
  events: ToolEvent[],
  id: string,
): { last: string | undefined; endIndex: number; lastIndex: number; inOrder: boolean } {
  let last: string | undefined;
  let inOrder = true;
  let lastIndex = -1;
  let endIndex = -1;
  events.forEach((event, index) => {
    if (event.toolCallId !== id) return;
    if (event.type === 'tool_update') {
      const text = textOf(event.partial);
      // Coalescing may skip updates, never reorder them.
      if (last !== undefined && Number(text.split(' ')[1]) <= Number(last.split(' ')[1])) inOrder = false;
      last = text;
      lastIndex = index;
    }
    if (event.type === 'tool_end') endIndex = index;
  });
  return { last, endIndex, lastIndex, inOrder };
}

test('under CPU load, the last of 200,000 updates arrives, and before tool_end, for each of three concurrent floods', async () => {
  const executor = await open({ tools: [fixture('hostile/update-flood.ts')], workers: { min: 3, max: 3 } });
  const events: ToolEvent[] = [];
  // A slow listener, so the host falls behind and updates are coalesced.
  executor.subscribe(async (event) => {
    events.push(event);
    if (event.type === 'tool_update') await new Promise((resolve) => setImmediate(resolve));
  });
  const batch = await executor.executeBatch([
    call('a', 'update_flood'),
    call('b', 'update_flood'),
    call('c', 'update_flood'),
  ]);
  for (const id of ['a', 'b', 'c']) {
    expect(textOf(batch.results.find((r) => r.toolCallId === id)!)).toBe('flood done');
    const { last, endIndex, lastIndex, inOrder } = lastUpdateBeforeEnd(events, id);
    expect(inOrder).toBe(true);
    expect(last).toBe('update 200000');
    expect(lastIndex).toBeLessThan(endIndex);
  }
});
