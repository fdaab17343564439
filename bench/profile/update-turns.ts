/**
 * How many updates the host delivers per event-loop turn during a flood
 * (not part of `npm run bench`): a setImmediate counter marks the turns,
 * the listener counts updates per turn and the turn's duration.
 *
 *   node --import tsx bench/profile/update-turns.ts [count=400000]
 */
import { fileURLToPath } from 'node:url';
import { toolpool } from '../lib/toolpool.ts';

const count = Number(process.argv[2] ?? 400_000);
const { createExecutor } = await toolpool();
const executor = await createExecutor({
  tools: [fileURLToPath(new URL('../tools/updates.ts', import.meta.url))],
  workers: { min: 1, max: 1 },
});
let turn = 0;
let spinning = true;
const spin = () => {
  turn++;
  if (spinning) setImmediate(spin);
};
spin();
let lastTurn = -1;
let turnStart = 0;
let last = 0;
let inTurn = 0;
const turns: Array<[ms: number, updates: number]> = [];
executor.subscribe((event) => {
  if (event.type !== 'tool_update') return;
  const now = performance.now();
  if (turn !== lastTurn) {
    if (inTurn) turns.push([last - turnStart, inTurn]);
    turnStart = now;
    inTurn = 0;
    lastTurn = turn;
  }
  inTurn++;
  last = now;
});
const call = [{ id: 'flood', name: 'updates', arguments: { mode: 'flood', count } }];
for (let round = 0; round < 3; round++) {
  turns.length = 0;
  inTurn = 0;
  const start = performance.now();
  await executor.executeBatch(call);
  if (inTurn) turns.push([last - turnStart, inTurn]);
  const ms = performance.now() - start;
  const delivered = turns.reduce((sum, [, n]) => sum + n, 0);
  const longest = [...turns].sort((a, b) => b[0] - a[0]).slice(0, 4);
  const sizes = turns.map(([, n]) => n).sort((a, b) => a - b);
  console.log(
    `flood ${ms.toFixed(0)} ms: ${delivered} delivered in ${turns.length} turns; median ${sizes[sizes.length >> 1]} and max ${sizes[sizes.length - 1]} updates per turn; longest turns (ms/updates) ${longest.map(([d, n]) => `${d.toFixed(1)}/${n}`).join(' ')}`,
  );
}
spinning = false;
await executor.close();
