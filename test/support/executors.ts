import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import { createExecutor, type Executor, type ExecutorOptions, type ToolEvent } from '../../src/index.ts';
import type { ToolCall, ToolResultMessage } from '../../src/core/tool.ts';

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
export const exampleTool = (name: string) => fileURLToPath(new URL(`../../tools/${name}`, import.meta.url));

/** createExecutor, closed again after each test so no worker outlives its test. */
export function useExecutors(): (options: ExecutorOptions) => Promise<Executor> {
  const open: Executor[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((executor) => executor.close()));
  });
  return async (options) => {
    const executor = await createExecutor(options);
    open.push(executor);
    return executor;
  };
}

/**
 * createExecutor once per key for the whole file or describe block it is
 * called in, closed after it: tests that each make a call on the same tools
 * start their workers once, not once per test.
 */
export function useSharedExecutors(): (key: string, options: ExecutorOptions) => Promise<Executor> {
  const open = new Map<string, Promise<Executor>>();
  afterAll(async () => {
    const executors = await Promise.allSettled(open.values());
    open.clear();
    await Promise.all(executors.map((made) => (made.status === 'fulfilled' ? made.value.close() : undefined)));
  });
  return (key, options) => {
    let executor = open.get(key);
    if (!executor) open.set(key, (executor = createExecutor(options)));
    return executor;
  };
}

export function recordEvents(executor: Executor): ToolEvent[] {
  const events: ToolEvent[] = [];
  executor.subscribe((event) => void events.push(event));
  return events;
}

export function call(id: string, name: string, args: ToolCall['arguments'] = {}): ToolCall {
  return { id, name, arguments: args };
}

export function textOf(message: Pick<ToolResultMessage, 'content'>): string {
  return message.content
    .map((part) =>
      part.type === 'text' ? part.text : part.type === 'image' ? `[image ${part.mimeType}]` : `[${part.type}]`,
    )
    .join('');
}

export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
