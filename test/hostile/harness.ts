/**
 * The zero-trust suite's harness. Each case runs one attack next to a
 * well-behaved bystander call in the same batch, then checks: the attack's
 * own call got an error result (or the safe outcome), the bystander is
 * intact and got no update it did not send, the host was not touched (its
 * prototypes, its functions), the next call is served, and after close() no
 * thread or listener is left.
 */
import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import {
  createExecutor,
  type Executor,
  type ExecutorOptions,
  type ToolEvent,
  type ToolResultMessage,
} from '../../src/index.ts';
import { call, fixture, textOf } from '../support/executors.ts';
import { eventually, threadCount } from '../support/leaks.ts';

export interface AttackCase {
  name: string;
  /** File under test/fixtures/hostile/. */
  fixture: string;
  /** The attack the fixture runs (its `target` argument). */
  target?: string;
  options?: Partial<ExecutorOptions>;
  /** Workers in the pool (default 2); 1 puts the next call in the attacker's worker slot. */
  workers?: number;
  expectResult: (result: ToolResultMessage) => void;
  expectHost?: (seen: HostSeen) => void;
  /** A later call on the same executor (with workers: 1, the attacker's worker slot): it must not pay for the attack. */
  followUp?: {
    tool: 'self' | 'probe';
    args: Record<string, unknown>;
    expectResult: (result: ToolResultMessage) => void;
  };
}

export interface HostSeen {
  /** Names of host functions called, in order. */
  hostCalls: string[];
  events: ToolEvent[];
  executor: Executor;
}

/** Names an attack tries to plant on the host's Object.prototype. */
const POLLUTION = ['polluted', 'pollutedByForgery', 'hijacked', 'fromHostCall'];

export const errorMatching = (pattern: RegExp) => (result: ToolResultMessage) => {
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(pattern);
};

export const brokeProtocol = errorMatching(/its worker broke toolpool's protocol/);
export const succeeded = (text: string | RegExp) => (result: ToolResultMessage) => {
  expect(result.isError).toBe(false);
  expect(textOf(result)).toMatch(text);
};

export function attackSuite(title: string, cases: AttackCase[]): void {
  describe(title, () => {
    test.each(cases)('$name', runAttack);
  });
}

/**
 * Process-wide threads start on first use and stay: libuv's thread pool (on
 * the first async file operation; on Node 24+ nothing in a fresh vitest
 * worker has started it yet) and V8's for the first Worker. Starting both
 * first makes the thread count a baseline only toolpool's leftovers exceed.
 */
let warmedUp: Promise<void> | undefined;
const warmUp = () =>
  (warmedUp ??= Promise.all([stat(fileURLToPath(import.meta.url)), new Worker('', { eval: true }).terminate()]).then(
    () => undefined,
  ));

export async function runAttack(attack: AttackCase): Promise<void> {
  await warmUp();
  const threadsBefore = threadCount();
  const workerListeners = process.listenerCount('worker');
  const hostCalls: string[] = [];
  const executor = await createExecutor({
    tools: [fixture(`hostile/${attack.fixture}`), fixture('probe.ts')],
    workers: { min: 1, max: attack.workers ?? 2 },
    host: {
      secret: () => (hostCalls.push('secret'), 'host secret'),
      echo: (value: unknown) => (hostCalls.push('echo'), value),
    },
    ...attack.options,
  });
  const events: ToolEvent[] = [];
  executor.subscribe((event) => void events.push(event));
  try {
    const name = executor.definitions[0]!.name;
    const batch = await executor.executeBatch([
      call('hostile', name, attack.target ? { target: attack.target } : {}),
      call('bystander', 'probe', { action: 'updates', count: 3, tag: 'intact' }),
    ]);
    attack.expectResult(batch.results[0]!);
    expect(batch.results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'sent 3 updates' }] });
    const bystanderUpdates = events.flatMap((e) =>
      e.type === 'tool_update' && e.toolCallId === 'bystander' ? [textOf(e.partial)] : [],
    );
    expect(bystanderUpdates).toEqual(['update 1', 'update 2', 'update 3']);
    for (const key of POLLUTION) expect((Object.prototype as Record<string, unknown>)[key]).toBeUndefined();
    attack.expectHost?.({ hostCalls, events, executor });
    if (attack.followUp) {
      const { tool, args, expectResult } = attack.followUp;
      const later = await executor.executeBatch([call('later', tool === 'self' ? name : 'probe', args)]);
      expectResult(later.results[0]!);
    }

    const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'served' })]);
    expect(textOf(next.results[0]!)).toBe('ok served');
  } finally {
    await executor.close();
  }
  expect(process.listenerCount('worker')).toBe(workerListeners);
  expect(await eventually(threadCount, (count) => count <= threadsBefore)).toBeLessThanOrEqual(threadsBefore);
}

const childScript = fileURLToPath(new URL('./exit-after-close.child.ts', import.meta.url));

/**
 * Runs an attack in a fresh Node process that creates an executor, runs the
 * attack and a follow-up call, closes the executor and does nothing else:
 * the process must then exit by itself, in bounded time.
 */
export function runInChild(
  fixtureName: string,
  target: string,
  timeoutMs = 80_000,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, fixture(`hostile/${fixtureName}`), target], {
      stdio: ['pipe', 'pipe', 'pipe'], // stdin stays open: a sync read of it blocks for good
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
