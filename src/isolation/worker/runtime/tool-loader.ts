import { pathToFileURL } from 'node:url';
import { ConfigErrors, errorMessage } from '../../../core/errors.ts';
import { definitionView, type DefinitionView } from '../../../core/tool-view.ts';
import type { ModuleTask } from '../protocol.ts';
import type { Tool } from '../../../core/tool.ts';
import { importVerified } from './verified-import.ts';
import { ToolpoolError } from '../../../core/error-codes.ts';

const loading = new Map<string, Promise<Tool>>();
/** Tools already imported, for a synchronous lookup on the hot path. */
const loaded = new Map<string, Tool>();

/** A tool already imported, by its `toolKey`. */
export function loadedToolByKey(key: string): Tool | undefined {
  return loaded.get(key);
}

/** Which tool a task is of: its module, and its factory options when it has them (the host keys tools the same way). */
export function toolKey({ module, options }: ModuleTask): string {
  return keyOf(module, options);
}

function keyOf(module: string, options: unknown): string {
  return options === undefined ? module : `${module}\0${JSON.stringify(options)}`;
}

/**
 * Imports a tool module once per worker and returns its default export.
 * `module` is the runnable file (compiled when the source was TypeScript);
 * messages name the source the user wrote.
 */
export function loadTool({ module, source, options, codeHash }: ModuleTask): Promise<Tool> {
  const key = keyOf(module, options);
  let tool = loading.get(key);
  if (!tool) {
    tool = importTool(module, source, options, codeHash);
    loading.set(key, tool);
    const attempt = tool;
    // A failed load is not kept: the next call asks again (a read that failed for want of descriptors may work then).
    // Node keeps a module whose code threw as it is, so asking again does not run that code twice.
    attempt.then(
      (value) => loaded.set(key, value),
      () => {
        if (loading.get(key) === attempt) loading.delete(key);
      },
    );
  }
  return tool;
}

async function importTool(
  module: string,
  source: string,
  options: unknown,
  codeHash: string | undefined,
): Promise<Tool> {
  let namespace: { default?: unknown };
  try {
    // A compiled copy in the compile cache runs only with the content the host compiled; the user's own JavaScript is imported where it is.
    namespace = (await (typeof codeHash === 'string'
      ? importVerified(module, codeHash)
      : import(pathToFileURL(module).href))) as { default?: unknown };
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', ConfigErrors.moduleFailedToLoad(source, errorMessage(error)));
  }
  let tool = namespace.default;
  if (typeof tool === 'function') {
    try {
      tool = await (tool as (options: unknown) => unknown)(options);
    } catch (error) {
      throw new ToolpoolError(
        'TOOLPOOL_ERR_MODULE_LOAD',
        ConfigErrors.moduleFailedToLoad(source, `its tool factory threw: ${errorMessage(error)}`),
      );
    }
  }
  if (typeof tool !== 'object' || tool === null)
    throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', ConfigErrors.noDefaultTool(source));
  return tool as Tool;
}

export async function describeModule(task: ModuleTask): Promise<DefinitionView> {
  return definitionView(await loadTool(task), `module ${task.source}`);
}
