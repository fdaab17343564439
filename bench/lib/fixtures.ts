import { availableParallelism } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { toRunnableModule } from '../../src/isolation/worker/module-compiler.ts';
import type { ToolCall, ToolResult } from '../../src/core/tool.ts';

const here = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

/** Tool modules the cases use (run in workers when given to createExecutor as paths). */
export const TOOLS = {
  noop: here('../tools/noop.ts'),
  sleep: here('../tools/sleep.ts'),
  crash: here('../tools/crash.ts'),
  updates: here('../tools/updates.ts'),
  hash: here('../../tools/hash.ts'),
  busyLoop: here('../tools/busy-loop.ts'),
  ioWait: here('../tools/io-wait.ts'),
  cpuMs: here('../tools/cpu-ms.ts'),
} as const;

export const RAW_WORKER = here('../raw/raw-worker.mjs');

/** Worker threads for the parallel cases: one per core, as toolpool's default (at least 2). */
export const CORES = Math.max(2, availableParallelism());

export function toolCall(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, name, arguments: args };
}

export function calls(count: number, name: string, args: Record<string, unknown>, prefix = 'c'): ToolCall[] {
  return Array.from({ length: count }, (_, i) => toolCall(`${prefix}${i}`, name, args));
}

/**
 * The raw piscina baseline: the same tool module's `execute`, in a plain
 * piscina pool with the same worker count and execArgv as toolpool's, and
 * nothing of toolpool around it.
 */
export class RawPool {
  readonly #piscina: Piscina;
  readonly #modules = new Map<string, Promise<string>>();

  /** piscina's defaults (atomics: 'sync'), except the worker count and execArgv, which match toolpool's pools. */
  constructor(threads: number, atomics: 'sync' | 'async' = 'sync', execArgv: string[] = []) {
    this.#piscina = new Piscina({
      filename: pathToFileURL(RAW_WORKER).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      execArgv,
      atomics,
    });
  }

  /** The runnable (compiled) file of a TypeScript tool module, as toolpool's own workers load it. */
  module(source: string): Promise<string> {
    let module = this.#modules.get(source);
    if (!module) {
      module = toRunnableModule(source).then((file) => pathToFileURL(file).href);
      this.#modules.set(source, module);
    }
    return module;
  }

  run(module: string, args: Record<string, unknown>): Promise<ToolResult> {
    return this.#piscina.run({ module, args }) as Promise<ToolResult>;
  }

  close(): Promise<void> {
    return this.#piscina.destroy();
  }
}
