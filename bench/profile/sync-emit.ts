/**
 * Experiment behind BENCHMARKS.md case 5 (not part of `npm run bench`): the
 * update flood with OrderedEmitter delivering synchronously when no earlier
 * delivery is pending and the listeners return no promise. It patches this
 * process's copy of the compiled build (bench/.build/<pid>/), never src/.
 *
 *   node --import tsx bench/profile/sync-emit.ts original|patched
 */
import { fileURLToPath } from 'node:url';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../lib/toolpool.ts';
await load('src/core/limits.ts');
const file = join(fileURLToPath(new URL('../.build/', import.meta.url)), String(process.pid), 'src/events.js');
const mode = process.argv[2] ?? 'original';
if (mode === 'patched') {
  let code = readFileSync(file, 'utf8');
  const from = `  emit(event, extra) {
    if (this.#listeners.size === 0 && !extra) return this.#tail;
    const listeners = extra ? [...this.#listeners, extra] : [...this.#listeners];
    this.#tail = this.#tail.then(() => this.#deliver(event, listeners));
    return this.#tail;
  }`;
  if (!code.includes(from)) throw new Error('events.js changed; experiment needs updating');
  code = code.replace(
    from,
    `  #pending = 0;
  emit(event, extra) {
    if (this.#listeners.size === 0 && !extra) return this.#pending === 0 ? undefined : this.#tail;
    const listeners = extra ? [...this.#listeners, extra] : [...this.#listeners];
    if (this.#pending === 0) {
      for (let i = 0; i < listeners.length; i++) {
        let returned;
        try { returned = listeners[i](event); } catch (error) { this.onListenerError(error); continue; }
        if (returned && typeof returned.then === 'function') {
          this.#pending++;
          const rest = listeners.slice(i + 1);
          this.#tail = Promise.resolve(returned).catch((error) => this.onListenerError(error)).then(() => this.#deliver(event, rest)).finally(() => this.#pending--);
          return this.#tail;
        }
      }
      return undefined;
    }
    this.#pending++;
    this.#tail = this.#tail.then(() => this.#deliver(event, listeners)).finally(() => this.#pending--);
    return this.#tail;
  }`,
  );
  writeFileSync(file, code);
}
const { createExecutor } = await load<typeof import('../../src/index.ts')>('src/index.ts');
const { watchEventLoop } = await import('../lib/event-loop.ts');
const { sleep } = await import('../lib/clock.ts');
const ex = await createExecutor({
  tools: [fileURLToPath(new URL('../tools/updates.ts', import.meta.url))],
  workers: { min: 1, max: 1 },
});
let delivered = 0;
ex.subscribe((e) => void (e.type === 'tool_update' && delivered++));
const call = [{ id: 'f', name: 'updates', arguments: { mode: 'flood', count: 400000 } }];
await ex.executeBatch(call);
for (let r = 0; r < 4; r++) {
  delivered = 0;
  const w = await watchEventLoop();
  const cpu = process.cpuUsage();
  const t = performance.now();
  await ex.executeBatch(call);
  const s = (performance.now() - t) / 1000;
  const used = process.cpuUsage(cpu);
  const d = await w.stop();
  const idle = await watchEventLoop();
  await sleep(s * 1000);
  const i = await idle.stop();
  console.log(
    mode.padEnd(8),
    `delivered ${delivered} (${(delivered / s / 1000).toFixed(0)}k/s) in ${(s * 1000).toFixed(0)} ms, loop p99 ${d.p99Ms.toFixed(1)} max ${d.maxMs.toFixed(1)} ms (idle p99 ${i.p99Ms.toFixed(1)}), process CPU ${((used.user + used.system) / 1000).toFixed(0)} ms`,
  );
}
await ex.close();
