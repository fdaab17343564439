import type { Executor } from './executor.ts';
import type { ExecutorOptions } from '../core/options.ts';

/**
 * Loads the tools (module tools are described inside a worker), compiles
 * each schema once and returns an executor. Rejects with a message naming
 * the module and the problem when a tool cannot be loaded.
 */
export async function createExecutor(options: ExecutorOptions): Promise<Executor> {
  // The executor's code (Ajv, esbuild, piscina, the tiers) is loaded on first use, not when 'toolpool' is imported:
  // every tool module imports defineTool from 'toolpool', in every worker, where none of it is needed.
  const executor = await import('./executor.ts');
  return executor.createExecutor(options);
}
