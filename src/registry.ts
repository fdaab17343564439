import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigErrors, errorMessage } from './errors.ts';
import { runInline } from './inline-runner.ts';
import { DEFAULT_LIMITS, resolveLimits, type ResolvedLimits } from './limits.ts';
import { toRunnableModule } from './pool/module-compiler.ts';
import type { PoolSet } from './pool/pool-set.ts';
import type { ModuleTask } from './pool/protocol.ts';
import type { ToolRunner } from './runner.ts';
import { describeTool, type ToolInfo } from './tool-info.ts';
import { isTool, type HostFunctions, type Tool, type ToolLimits } from './tool.ts';
import { compileArgumentValidator, type ArgumentValidator } from './validation.ts';

/**
 * A tool as `createExecutor({ tools })` accepts it: a module path or file
 * URL (runs in workers), the same with options for a module whose default
 * export is a factory `(options) => tool`, or an inline `defineTool()`
 * object (runs on this thread).
 */
export type ToolEntry = string | URL | ModuleEntry | Tool;

export interface ModuleEntry {
  module: string | URL;
  /** Structured-cloned into the worker and passed to the module's default export. */
  options?: unknown;
}

export interface RegisteredTool {
  readonly info: ToolInfo;
  /** How the user gave it, for messages: `module tools/calc.ts` or `inline tool "calc"`. */
  readonly source: string;
  readonly validate: ArgumentValidator;
  readonly runner: ToolRunner;
  /** The tool's limits over the executor's over the defaults, resolved once. */
  readonly limits: ResolvedLimits;
}

export interface RegistryContext {
  pools: PoolSet;
  limits: ToolLimits;
  host: HostFunctions;
}

/**
 * Turns the `tools` option into registered tools: each definition checked,
 * each schema compiled once, names unique. Module tools are described by a
 * worker, so none of their code runs on this thread.
 */
export async function registerTools(entries: readonly unknown[], context: RegistryContext): Promise<Map<string, RegisteredTool>> {
  const registered = await Promise.all(entries.map((entry, index) => registerOne(entry, index, context)));
  const byName = new Map<string, RegisteredTool>();
  for (const tool of registered) {
    const existing = byName.get(tool.info.name);
    if (existing) throw new Error(ConfigErrors.duplicateName(tool.info.name, existing.source, tool.source));
    byName.set(tool.info.name, tool);
  }
  return byName;
}

async function registerOne(entry: unknown, index: number, context: RegistryContext): Promise<RegisteredTool> {
  if (typeof entry === 'string' || entry instanceof URL) return registerModule({ path: modulePath(entry, index) }, context);
  if (isModuleEntry(entry)) return registerModule({ path: modulePath(entry.module, index), options: entry.options }, context);
  if (isTool(entry) || (typeof entry === 'object' && entry !== null && 'execute' in entry)) return registerInline(entry as Tool, context);
  throw new Error(ConfigErrors.badToolEntry(index, entry === null ? 'null' : typeof entry));
}

function registerInline(tool: Tool, context: RegistryContext): RegisteredTool {
  const where = `inline tool ${JSON.stringify((tool as { name?: unknown }).name)}`;
  const info = describeTool(tool, where);
  return {
    info,
    source: where,
    validate: compileArgumentValidator(info.name, where, info.parameters),
    limits: resolveLimits(context.limits, info.limits),
    runner: {
      prepare: async (raw) => tool.prepareArguments!(raw),
      execute: (job) => runInline(tool, job, context.host),
    },
  };
}

function isModuleEntry(entry: unknown): entry is ModuleEntry {
  return typeof entry === 'object' && entry !== null && 'module' in entry && !isTool(entry);
}

async function registerModule({ path, options }: { path: string; options?: unknown }, context: RegistryContext): Promise<RegisteredTool> {
  const where = `module ${path}`;
  if (!(await stat(path).catch(() => undefined))?.isFile()) throw new Error(ConfigErrors.moduleNotFound(path));
  let module: string;
  try {
    module = await toRunnableModule(path);
  } catch (error) {
    throw new Error(ConfigErrors.moduleFailedToLoad(path, errorMessage(error)));
  }
  const describer = await context.pools.get(context.limits.maxMemoryMb ?? DEFAULT_LIMITS.maxMemoryMb);
  const ref: ModuleTask = { module, source: path, ...(options !== undefined ? { options } : {}) };
  const info = await describer.describe(ref);
  const limits = resolveLimits(context.limits, info.limits);
  const pool = () => context.pools.get(limits.maxMemoryMb);
  return {
    info,
    source: where,
    validate: compileArgumentValidator(info.name, where, info.parameters),
    limits,
    runner: {
      prepare: async (raw) => (await pool()).prepare(ref, raw),
      execute: async (job) => (await pool()).execute({ ...job, ref }),
    },
  };
}

function modulePath(entry: string | URL, index: number): string {
  if (entry instanceof URL || entry.startsWith('file:')) {
    const url = new URL(entry);
    if (url.protocol !== 'file:') throw new Error(ConfigErrors.badToolEntry(index, `a ${url.protocol} URL`));
    return fileURLToPath(url);
  }
  return resolve(entry);
}
