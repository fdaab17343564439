import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigErrors, errorMessage } from './errors.ts';
import { hostForInline, runInline } from './inline-runner.ts';
import type { Tiers } from './isolation/tiers.ts';
import { hostLimits, resolveLimits, type ResolvedLimits } from './limits.ts';
import { toRunnableModule } from './pool/module-compiler.ts';
import type { ModuleTask } from './pool/protocol.ts';
import type { ToolRunner } from './runner.ts';
import { withSyntaxLocation } from './module-syntax.ts';
import { checkToolInfo, describeTool, type ToolInfo } from './tool-info.ts';
import { strongerIsolation } from './isolation/strength.ts';
import { withSandboxNetHint } from './sandbox-net-hint.ts';
import { toolModulesIn } from './tool-folders.ts';
import { isTool, type HostFunctions, type Isolation, type Tool, type ToolLimits } from './tool.ts';
import { compileArgumentValidator, type ArgumentValidator } from './validation.ts';

/**
 * A tool as `createExecutor({ tools })` accepts it: a module path or file
 * URL (runs in workers), or a folder of them, the same with options for
 * modules whose default export is a factory `(options) => tool`, or an
 * inline `defineTool()` object (runs on this thread).
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
  tiers: Tiers;
  limits: ToolLimits;
  /** The host's own limits per tool name, over `limits`. */
  toolLimits: Readonly<Record<string, ToolLimits>>;
  host: HostFunctions;
  isolation: Isolation;
}

/**
 * An entry after the first step: an inline tool, or a module compiled and
 * ready to import in a worker; `folder` when it was found in a folder.
 */
export type LoadedEntry = { inline: Tool } | { module: ModuleTask; folder?: string };

/**
 * Step one: find each module and make it importable by a plain worker
 * (TypeScript is compiled here without running it); a folder stands for
 * the tool modules in it (see tool-folders.ts). Nothing of a module runs on
 * this thread.
 */
export async function loadEntries(entries: readonly unknown[]): Promise<LoadedEntry[]> {
  return (await Promise.all(entries.map((entry, index) => loadEntry(entry, index)))).flat();
}

async function loadEntry(entry: unknown, index: number): Promise<LoadedEntry[]> {
  if (typeof entry === 'string' || entry instanceof URL) return loadModules(modulePath(entry, index));
  if (isModuleEntry(entry)) return loadModules(modulePath(entry.module, index), entry.options);
  if (isTool(entry) || (typeof entry === 'object' && entry !== null && 'execute' in entry)) return [{ inline: entry as Tool }];
  throw new Error(ConfigErrors.badToolEntry(index, entry === null ? 'null' : typeof entry));
}

/** One module, or each tool module of a folder, with the same factory options. */
async function loadModules(path: string, options?: unknown): Promise<LoadedEntry[]> {
  const found = await stat(path).catch(() => undefined);
  if (found?.isFile()) return [{ module: await compileModule(path, options) }];
  if (!found?.isDirectory()) throw new Error(ConfigErrors.moduleNotFound(path));
  const files = await toolModulesIn(path);
  if (files.length === 0) throw new Error(ConfigErrors.noToolModulesIn(path));
  return Promise.all(files.map(async (file) => ({ module: await compileModule(file, options), folder: path })));
}

/**
 * Step two: read each definition (module tools inside their tier), check
 * it, compile its schema once, and make names unique.
 */
export async function registerTools(entries: LoadedEntry[], context: RegistryContext): Promise<Map<string, RegisteredTool>> {
  const registered = await Promise.all(
    entries.map((entry) => ('inline' in entry ? registerInline(entry.inline, context) : registerFound(entry, context))),
  );
  reportSkipped(entries.filter((_, index) => registered[index] === undefined));
  const byName = new Map<string, RegisteredTool>();
  for (const tool of registered) {
    if (tool === undefined) continue;
    const existing = byName.get(tool.info.name);
    if (existing) throw new Error(ConfigErrors.duplicateName(tool.info.name, existing.source, tool.source));
    byName.set(tool.info.name, tool);
  }
  return byName;
}

async function registerInline(tool: Tool, context: RegistryContext): Promise<RegisteredTool> {
  const where = `inline tool ${JSON.stringify((tool as { name?: unknown }).name)}`;
  const info = await describeTool(tool, where);
  const host = hostForInline(context.host);
  return {
    info,
    source: where,
    validate: compileArgumentValidator(info.name, where, info.parameters),
    limits: resolveLimits(hostLimits(context.limits, context.toolLimits, info.name), info.limits),
    runner: {
      prepare: async (raw) => tool.prepareArguments!(raw),
      needsApproval: async (args) => (tool.needsApproval as (args: Record<string, unknown>) => unknown)(args),
      execute: (job) => runInline(tool, job, host),
    },
  };
}

/**
 * A module found in a folder whose default export is no tool (a helper) is
 * skipped: `undefined`. Any other failure, there or for a module named
 * explicitly, fails the executor.
 */
async function registerFound(entry: { module: ModuleTask; folder?: string }, context: RegistryContext): Promise<RegisteredTool | undefined> {
  try {
    return await registerModule(entry.module, context);
  } catch (error) {
    if (entry.folder !== undefined && errorMessage(error) === ConfigErrors.noDefaultTool(entry.module.source)) return undefined;
    throw error;
  }
}

/** Said once per executor, listing them: a helper in a tools folder is normal, but a tool that was meant and is missing should be noticed. */
function reportSkipped(skipped: LoadedEntry[]): void {
  const files = skipped.flatMap((entry) => ('module' in entry ? [entry.module.source] : []));
  if (files.length > 0) process.emitWarning(ConfigErrors.skippedModules(files), 'ToolpoolWarning');
}

async function registerModule(ref: ModuleTask, context: RegistryContext): Promise<RegisteredTool> {
  const where = `module ${ref.source}`;
  // The definition is read where the executor isolates tools; a tool may then ask for a stronger tier.
  let info: ToolInfo;
  try {
    info = await context.tiers.get(context.isolation).describe(ref);
  } catch (error) {
    throw await withSyntaxLocation(ref.source, error);
  }
  info = await checkToolInfo(info, where);
  // The pool lets this many calls of the tool share a worker.
  if (info.concurrency !== undefined) ref = { ...ref, concurrency: info.concurrency };
  const isolation = strongerIsolation(context.isolation, info.isolation);
  const tier = context.tiers.get(isolation);
  const limits = resolveLimits(hostLimits(context.limits, context.toolLimits, info.name), info.limits);
  return {
    info,
    source: where,
    validate: compileArgumentValidator(info.name, where, info.parameters, { untrusted: true, revalidatedInWorker: info.schemaVendor !== undefined }),
    limits,
    runner: {
      prepare: (raw, signal) => tier.prepare(ref, raw, limits, signal),
      needsApproval: (args) => tier.needsApproval(ref, args, limits),
      execute: isolation === 'sandbox' ? (job) => tier.execute(job, ref).then(withSandboxNetHint) : (job) => tier.execute(job, ref),
    },
  };
}

async function compileModule(path: string, options?: unknown): Promise<ModuleTask> {
  try {
    const module = await toRunnableModule(path);
    return { module, source: path, ...(options !== undefined ? { options } : {}) };
  } catch (error) {
    throw new Error(ConfigErrors.moduleFailedToLoad(path, errorMessage(error)));
  }
}

function isModuleEntry(entry: unknown): entry is ModuleEntry {
  return typeof entry === 'object' && entry !== null && 'module' in entry && !isTool(entry);
}

function modulePath(entry: string | URL, index: number): string {
  if (entry instanceof URL || entry.startsWith('file:')) {
    const url = new URL(entry);
    if (url.protocol !== 'file:') throw new Error(ConfigErrors.badToolEntry(index, `a ${url.protocol} URL`));
    return fileURLToPath(url);
  }
  return resolve(entry);
}
