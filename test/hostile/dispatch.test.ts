/**
 * Zero trust, worker tier: attacks on the pool's dispatch (leases, calls
 * sent ahead, the start counter, refused). An innocent call beside the
 * attack, of another tool or sharing the attacker's worker, must get its own
 * result: not a timeout it did not use, not an error another call caused, and
 * it must not run twice.
 */
import { expect, test } from 'vitest';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';
import { attackSuite, succeeded } from './harness.ts';

const open = useExecutors();
const tools = [fixture('hostile/dispatch.ts'), fixture('probe.ts')];
const sharing = [{ module: fixture('hostile/dispatch.ts'), options: { concurrency: 2 } }, fixture('probe.ts')];
const attack = (id: string, target: string, ms?: number) =>
  call(id, 'dispatch_attack', ms === undefined ? { target } : { target, ms });

test('a worker held busy after its call returned does not spend the timeout of the next call sent to it', async () => {
  const executor = await open({ tools, workers: { min: 1, max: 1 }, limits: { timeoutMs: 1_000, abortGraceMs: 100 } });
  // The probe has run in this worker before: its next call there has no import to wait for.
  await executor.executeBatch([call('warm', 'probe', { action: 'ok' })]);
  // The innocent call is sent the moment the attack's result arrives, and counted begun from then; the worker starts it 2.5 s later.
  const { results } = await executor.executeBatch([
    attack('attack', 'busy-after-return', 2_500),
    call('innocent', 'probe', { action: 'sleep', ms: 200, tag: 'innocent' }),
  ]);
  expect(textOf(results[0]!)).toBe('returned');
  expect(textOf(results[1]!)).toBe('slept 200 innocent');
}, 20_000);

test('an innocent call sent to workers whose last call left them to die on the next call is not failed for it', async () => {
  const executor = await open({ tools, workers: { min: 3, max: 3 } });
  // Three workers run an attack call each; the innocent call is sent to each in turn as it looks idle, and each dies before starting it.
  const { results } = await executor.executeBatch([
    attack('a1', 'exit-on-next-call', 500),
    attack('a2', 'exit-on-next-call', 500),
    attack('a3', 'exit-on-next-call', 500),
    call('innocent', 'probe', { action: 'ok', tag: 'innocent' }),
  ]);
  expect(textOf(results[3]!)).toBe('ok innocent');
}, 20_000);

test('refused for a co-runner it has already started does not run that call twice', async () => {
  const runs: string[] = [];
  const executor = await open({
    tools: sharing,
    workers: { min: 2, max: 2 },
    host: { ran: (id: unknown) => void runs.push(String(id)) },
  });
  const { results } = await executor.executeBatch([
    attack('attacker', 'refuse-co-runner', 300),
    attack('victim', 'victim', 600),
  ]);
  expect(runs.filter((id) => id === 'victim')).toHaveLength(1);
  // Whatever the victim's outcome, it is not a second run's result.
  expect(results[1]!.isError || textOf(results[1]!) === 'victim done').toBe(true);
}, 20_000);

test("calls streaming in do not starve another tool's prepareArguments past its bound", async () => {
  // The bound is generous (a loaded machine once took over 5 s to prepare in first-come order); the stream outlasts
  // it by far, so a prepare starved until the stream ends still fails. The stream stops once the prepare answered.
  const executor = await open({
    tools: [fixture('probe.ts'), fixture('prepare-where.ts')],
    workers: { min: 1, max: 1, loadTimeoutMs: 20_000 },
    limits: { timeoutMs: 1_000 },
  });
  // Another agent keeps the one worker fed: a 300 ms call every 150 ms, for up to 150 calls (45 s of work).
  const stopStream = new AbortController();
  const stream: Promise<unknown>[] = [];
  const feeding = (async () => {
    for (let i = 0; i < 150 && !stopStream.signal.aborted; i++) {
      stream.push(
        executor.executeBatch([call(`s${i}`, 'probe', { action: 'sleep', ms: 300 })], { signal: stopStream.signal }),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 200));
  // Its prepare bound is timeoutMs + loadTimeoutMs = 21 s; in first-come order it waits for a few calls at most.
  const { results } = await executor.executeBatch([call('prepared', 'prepare_where', { preparedOnMainThread: true })]);
  stopStream.abort();
  await feeding;
  await Promise.all(stream);
  expect(results[0]!.isError, textOf(results[0]!)).toBe(false);
}, 120_000);

attackSuite('dispatch: the realm a later call shares', [
  {
    name: "a listener left on the worker's channel to answer the next call with a forged result",
    fixture: 'dispatch.ts',
    target: 'listen-for-next-call',
    workers: 1,
    expectResult: succeeded('returned'),
    followUp: { tool: 'probe', args: { action: 'ok', tag: 'own result' }, expectResult: succeeded('ok own result') },
  },
  {
    name: 'a tick left reading the channel itself, to take the next call and forge its result',
    fixture: 'dispatch.ts',
    target: 'steal-next-call',
    workers: 1,
    expectResult: succeeded('returned'),
    followUp: { tool: 'probe', args: { action: 'ok', tag: 'own result' }, expectResult: succeeded('ok own result') },
  },
  {
    name: 'Array.prototype.shift patched to rewrite the arguments of the calls the worker takes next',
    fixture: 'dispatch.ts',
    target: 'patch-array-shift',
    workers: 1,
    expectResult: succeeded('returned'),
    followUp: { tool: 'probe', args: { action: 'ok', tag: 'unchanged' }, expectResult: succeeded('ok unchanged') },
  },
]);
