import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigErrors, errorMessage } from '../core/errors.ts';
import { hostForInline, runInline } from '../isolation/inline/inline-runner.ts';
import type { Domain, TrustDomains } from '../isolation/trust-domains.ts';
import { hostLimits, resolveLimits } from '../core/limits.ts';
import { compileModule as compileRunnable } from '../isolation/worker/module-compiler.ts';
import type { ModuleEntry } from '../core/options.ts';
import type { RemoteRunner } from '../core/remote.ts';
import type { ModuleTask } from '../core/tier.ts';
import type { ToolRunner } from '../core/runner.ts';
import { withSyntaxLocation } from '../tools/module-syntax.ts';
import { checkToolInfo, describeTool, describeView, type ToolInfo } from '../tools/tool-info.ts';
import type { DefinitionView } from '../core/tool-view.ts';
import { strongerIsolation } from '../isolation/strength.ts';
import { withSandboxNetHint } from '../isolation/sandbox/sandbox-net-hint.ts';
import { toolModulesIn } from '../tools/tool-folders.ts';
import { isTool, type HostFunctions, type Isolation, type Tool, type ToolLimits } from '../core/tool.ts';
import type { DetailsValidator } from '../tools/output-validation.ts';
import type { RegisteredTool } from '../tools/registered-tool.ts';
import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';
import { listingKey, readListing, writeListing, type Listing } from './listing-cache.ts';

export type { RegisteredTool };

export interface RegistryContext {
  domains: TrustDomains;
  limits: ToolLimits;
  /** The host's own limits per tool name, over `limits`. */
  toolLimits: Readonly<Record<string, ToolLimits>>;
  host: HostFunctions;
  isolation: Isolation;
  /** `createExecutor({ coerceArguments })`: `false` runs only arguments of the schemas' own types. */
  coerceArguments: boolean;
  /** Where module tools' `execute` runs when not here (toolpool/bullmq's remoteRunner); describe, prepare and needsApproval stay here. */
  remote?: RemoteRunner;
}

/**
 * An entry after the first step: an inline tool, or a module compiled and
 * ready to import in a worker, with the trust domain it runs in; `folder`
 * when it was found in a folder.
 */
export type LoadedEntry = { inline: Tool } | ModuleFound;

interface ModuleFound {
  module: ModuleTask;
  domain: string;
  /** What the module is (its source and the files it bundles), not where it is: a worker machine checks it against its own copy. */
  contentHash: string;
  folder?: string;
}

/** The keys a module entry may have. */
const MODULE_ENTRY_KEYS = ['module', 'options', 'trustDomain'];

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
  if (isModuleEntry(entry)) {
    checkModuleEntry(entry, index);
    return loadModules(modulePath(entry.module, index), entry.options, entry.trustDomain);
  }
  if (isTool(entry) || (typeof entry === 'object' && entry !== null && 'execute' in entry))
    return [{ inline: entry as Tool }];
  throw new ToolpoolError(
    'TOOLPOOL_ERR_INVALID_TOOL',
    ConfigErrors.badToolEntry(index, entry === null ? 'null' : typeof entry),
  );
}

/** One module, or each tool module of a folder, with the same factory options; each module is a trust domain of its own. */
async function loadModules(path: string, options?: unknown, trustDomain?: string): Promise<LoadedEntry[]> {
  const found = await stat(path).catch(() => undefined);
  if (found?.isFile()) return [{ ...(await compileModule(path, options)), domain: domainKey(path, trustDomain) }];
  if (!found?.isDirectory()) throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', ConfigErrors.moduleNotFound(path));
  const files = await toolModulesIn(path);
  if (files.length === 0) throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', ConfigErrors.noToolModulesIn(path));
  return Promise.all(
    files.map(async (file) => ({
      ...(await compileModule(file, options)),
      domain: domainKey(file, trustDomain),
      folder: path,
    })),
  );
}

/**
 * Step two: read each definition (module tools inside their trust
 * domain), check it, compile its schema once, and make names unique.
 */
export async function registerTools(
  entries: LoadedEntry[],
  context: RegistryContext,
): Promise<Map<string, RegisteredTool>> {
  const domainFiles = filesByDomain(entries);
  const registered = await Promise.all(
    entries.map((entry) =>
      'inline' in entry
        ? registerInline(entry.inline, context)
        : registerFound(entry, context, context.domains.domain(entry.domain, domainFiles.get(entry.domain)!)),
    ),
  );
  reportSkipped(entries.filter((_, index) => registered[index] === undefined));
  return uniqueNames(registered);
}

function uniqueNames(registered: readonly (RegisteredTool | undefined)[]): Map<string, RegisteredTool> {
  const byName = new Map<string, RegisteredTool>();
  for (const tool of registered) {
    if (tool === undefined) continue;
    const existing = byName.get(tool.info.name);
    if (existing)
      throw new ToolpoolError(
        'TOOLPOOL_ERR_DUPLICATE_TOOL',
        ConfigErrors.duplicateName(tool.info.name, existing.source, tool.source),
      );
    byName.set(tool.info.name, tool);
  }
  return byName;
}

/**
 * Ajv and the schema checks around it, loaded when the first validator is
 * compiled: `toolpool serve` lists tools listed from the cache before that.
 */
function validators() {
  validatorsLoading ??= Promise.all([import('../tools/validation.ts'), import('../tools/output-validation.ts')]).then(
    ([{ compileArgumentValidator }, { compileDetailsValidator }]) => ({
      compileArgumentValidator,
      compileDetailsValidator,
    }),
  );
  return validatorsLoading;
}

type Validators = {
  compileArgumentValidator: typeof import('../tools/validation.ts').compileArgumentValidator;
  compileDetailsValidator: typeof import('../tools/output-validation.ts').compileDetailsValidator;
};
/** Loaded once, for every tool of every executor of the process. */
let validatorsLoading: Promise<Validators> | undefined;

async function registerInline(tool: Tool, context: RegistryContext): Promise<RegisteredTool> {
  const where = `inline tool ${JSON.stringify((tool as { name?: unknown }).name)}`;
  const info = describeTool(tool, where);
  const host = hostForInline(context.host);
  const compile = await validators();
  return {
    info,
    source: where,
    validate: compile.compileArgumentValidator(info.name, where, info.parameters, { coerce: context.coerceArguments }),
    ...detailsValidator(compile, info, where),
    limits: resolveLimits(hostLimits(context.limits, context.toolLimits, info.name), info.limits),
    runner: {
      prepare: async (raw) => tool.prepareArguments!(raw),
      needsApproval: async (args) => (tool.needsApproval as (args: Record<string, unknown>) => unknown)(args),
      execute: (job) => runInline(tool, job, host),
    },
  };
}

/** Tools listed before their workers answered (`toolpool serve`): each name's own describe in this run, which its calls wait for. */
export interface ListedTools {
  tools: Map<string, RegisteredTool>;
  /** By listed name: the tool as this run's worker described it, or one whose calls fail with why it could not be. */
  confirming: Map<string, Promise<RegisteredTool>>;
  /** Modules the cache says hold no tool, described anyway (the cache is writable by tools): a tool found joins the list then. */
  late: Promise<RegisteredTool | undefined>[];
}

/**
 * Step two for `toolpool serve`: a module whose listing is cached under its
 * current content hash (listing-cache.ts) is listed from it at once, while
 * its worker describes it as `registerTools` would; one without is
 * described first, and its listing stored for the next start. A listed
 * tool never runs on the cached word: the executor waits for `confirming`
 * before a call of it looks the tool up, and the confirmed tool replaces it.
 */
export async function registerToolsListedFirst(entries: LoadedEntry[], context: RegistryContext): Promise<ListedTools> {
  const domainFiles = filesByDomain(entries);
  const confirming = new Map<string, Promise<RegisteredTool>>();
  const listed: Listed[] = await Promise.all(
    entries.map(async (entry): Promise<Listed> => {
      if ('inline' in entry) return { tool: await registerInline(entry.inline, context) };
      const domain = context.domains.domain(entry.domain, domainFiles.get(entry.domain)!);
      const key = listingKey({
        source: entry.module.source,
        contentHash: entry.contentHash,
        ...(entry.module.codeHash !== undefined ? { codeHash: entry.module.codeHash } : {}),
        ...(entry.module.options !== undefined ? { options: entry.module.options } : {}),
        isolation: context.isolation,
      });
      const cached = key !== undefined ? listedInfo(await readListing(key), entry) : undefined;
      const describing = registerFound(entry, context, domain).then(async (tool) => {
        if (tool?.info.isolation === 'sandbox') await context.domains.ready('sandbox');
        if (key !== undefined) await writeListing(key, tool ? { info: tool.info } : { skipped: true });
        return tool;
      });
      // A helper module of a tools folder, as it was last time: nothing to list now, and nothing to wait for. Its describe
      // still runs: a tool could have written that, and a tool it finds is listed once found.
      if (cached === 'skipped') return { tool: undefined, late: describing.catch(() => undefined) };
      if (cached === undefined) return { tool: await describing };
      const provisional = listedTool(cached, entry, context);
      return { tool: provisional, confirm: confirmed(describing, provisional, context), describing };
    }),
  );
  await describeClashing(listed);
  reportSkipped(entries.filter((_, index) => listed[index]!.tool === undefined));
  const tools = uniqueNames(listed.map((entry) => entry.tool));
  for (const entry of listed) if (entry.confirm) confirming.set(entry.tool!.info.name, entry.confirm);
  return { tools, confirming, late: listed.flatMap((entry) => (entry.late ? [entry.late] : [])) };
}

type Listed = {
  tool: RegisteredTool | undefined;
  confirm?: Promise<RegisteredTool>;
  describing?: Promise<RegisteredTool | undefined>;
  late?: Promise<RegisteredTool | undefined>;
};

/**
 * A cached listing may claim a name another module has (the cache is
 * writable by tools without permissions): the modules listed under a name
 * listed more than once wait for their own describe, so only what the
 * workers say can make two tools clash and stop the start.
 */
async function describeClashing(listed: Listed[]): Promise<void> {
  const counts = new Map<string, number>();
  for (const { tool } of listed) if (tool) counts.set(tool.info.name, (counts.get(tool.info.name) ?? 0) + 1);
  await Promise.all(
    listed.map(async (entry) => {
      if (!entry.confirm || !entry.describing || counts.get(entry.tool!.info.name)! < 2) return;
      entry.confirm.catch(() => undefined);
      entry.tool = await entry.describing;
      delete entry.confirm;
    }),
  );
}

/** A cached listing checked as a worker's answer is; undefined (described anew) when it does not pass. */
function listedInfo(listing: Listing | undefined, entry: ModuleFound): ToolInfo | 'skipped' | undefined {
  if (listing === undefined) return undefined;
  if ('skipped' in listing) return entry.folder !== undefined ? 'skipped' : undefined;
  try {
    return checkToolInfo(listing.info, `module ${entry.module.source}`);
  } catch {
    return undefined;
  }
}

/**
 * A tool as listed: its info for tools/list; its calls never reach it (they
 * wait for the confirmed tool), so it can only say so. It keeps the listed
 * `needsApproval`, which `serve` reads before a call to know whether to ask
 * the client: a cached listing that says `never` for a tool that needs
 * approval only costs that call its question, since the confirmed tool still
 * refuses to run it unapproved.
 */
function listedTool(info: ToolInfo, entry: ModuleFound, context: RegistryContext): RegisteredTool {
  const where = `module ${entry.module.source}`;
  const tool = failingTool(info, where, context, ConfigErrors.listedToolNotConfirmed(entry.module.source));
  return { ...tool, info: { ...tool.info, needsApproval: info.needsApproval } };
}

/**
 * The tool this run's worker described, when it is the one listed (same
 * name); otherwise (its describe failed, or it now says another name) a
 * tool whose calls fail saying why.
 */
async function confirmed(
  describing: Promise<RegisteredTool | undefined>,
  listed: RegisteredTool,
  context: RegistryContext,
): Promise<RegisteredTool> {
  try {
    const tool = await describing;
    if (tool !== undefined && tool.info.name === listed.info.name) return tool;
    return failingTool(
      listed.info,
      listed.source,
      context,
      ConfigErrors.listedToolChanged(listed.source.replace(/^module /, ''), listed.info.name),
    );
  } catch (error) {
    return failingTool(listed.info, listed.source, context, errorMessage(error));
  }
}

function failingTool(info: ToolInfo, where: string, context: RegistryContext, message: string): RegisteredTool {
  const fail = async (): Promise<never> => {
    throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', message);
  };
  return {
    info: { ...info, hasPrepare: false, needsApproval: 'never' },
    source: where,
    // Arguments pass as they are: the call fails at execute with the reason, whatever it was given.
    validate: (args) => ({ ok: true, args }),
    limits: resolveLimits(hostLimits(context.limits, context.toolLimits, info.name), info.limits),
    runner: { prepare: fail, needsApproval: fail, execute: fail },
  };
}

/** The runnable files and sources of each domain's modules: what its workers may read under permissions, and nothing of other domains. */
function filesByDomain(entries: LoadedEntry[]): Map<string, { files: string[]; sources: string[] }> {
  const byDomain = new Map<string, { files: string[]; sources: string[] }>();
  for (const entry of entries) {
    if (!('module' in entry)) continue;
    const modules = byDomain.get(entry.domain) ?? { files: [], sources: [] };
    if (!modules.files.includes(entry.module.module)) modules.files.push(entry.module.module);
    if (!modules.sources.includes(entry.module.source)) modules.sources.push(entry.module.source);
    byDomain.set(entry.domain, modules);
  }
  return byDomain;
}

/**
 * A module found in a folder whose default export is no tool (a helper) is
 * skipped: `undefined`. Any other failure, there or for a module named
 * explicitly, fails the executor.
 */
async function registerFound(
  entry: ModuleFound,
  context: RegistryContext,
  domain: Domain,
): Promise<RegisteredTool | undefined> {
  try {
    return await registerModule(entry, context, domain);
  } catch (error) {
    if (entry.folder !== undefined && errorMessage(error) === ConfigErrors.noDefaultTool(entry.module.source))
      return undefined;
    throw error;
  }
}

/** Said once per executor, listing them: a helper in a tools folder is normal, but a tool that was meant and is missing should be noticed. */
function reportSkipped(skipped: LoadedEntry[]): void {
  const files = skipped.flatMap((entry) => ('module' in entry ? [entry.module.source] : []));
  if (files.length > 0) process.emitWarning(ConfigErrors.skippedModules(files), 'ToolpoolWarning');
}

async function registerModule(entry: ModuleFound, context: RegistryContext, domain: Domain): Promise<RegisteredTool> {
  let ref = entry.module;
  const where = `module ${ref.source}`;
  // Ajv loads here while the worker reads the module.
  const compiling = validators();
  // Awaited only when the describe succeeds; a failed import then is not left unhandled.
  compiling.catch(() => undefined);
  // The definition is read where the executor isolates tools; a tool may then ask for a stronger tier.
  let view: DefinitionView;
  try {
    view = await domain.describe(ref, context.isolation);
  } catch (error) {
    throw await withSyntaxLocation(ref.source, error);
  }
  // What the worker read is untrusted: every field is checked here.
  const info = checkToolInfo(describeView(view, where), where);
  // The pool lets this many calls of the tool share a worker.
  if (info.concurrency !== undefined) ref = { ...ref, concurrency: info.concurrency };
  const isolation = strongerIsolation(context.isolation, info.isolation);
  const limits = resolveLimits(hostLimits(context.limits, context.toolLimits, info.name), info.limits);
  const task = ref;
  const { remote } = context;
  const moduleHash = entry.contentHash;
  // With a remote runner only execute leaves this machine; describe, prepare and needsApproval stay in the module's domain here.
  const execute: ToolRunner['execute'] = remote
    ? (job) => remote.execute({ ...job, tool: info.name, moduleHash, isolation })
    : (job) => domain.execute(job, task, isolation);
  const compile = await compiling;
  return {
    info,
    source: where,
    validate: compile.compileArgumentValidator(info.name, where, info.parameters, {
      untrusted: true,
      revalidatedInWorker: info.schemaVendor !== undefined,
      coerce: context.coerceArguments,
    }),
    ...detailsValidator(compile, info, where, { untrusted: true }),
    limits,
    isolation,
    moduleHash,
    runner: {
      prepare: (raw, signal) => domain.prepare(task, isolation, raw, limits, signal),
      needsApproval: (args) => domain.needsApproval(task, isolation, args, limits),
      execute: isolation === 'sandbox' ? (job) => execute(job).then(withSandboxNetHint) : execute,
    },
  };
}

function detailsValidator(
  compile: Validators,
  info: ToolInfo,
  where: string,
  trust: { untrusted?: boolean } = {},
): { checkDetails?: DetailsValidator } {
  return info.outputSchema
    ? { checkDetails: compile.compileDetailsValidator(info.name, where, info.outputSchema, trust) }
    : {};
}

async function compileModule(path: string, options?: unknown): Promise<{ module: ModuleTask; contentHash: string }> {
  try {
    const compiled = await compileRunnable(path);
    const module: ModuleTask = {
      module: compiled.file,
      source: path,
      ...(compiled.codeHash ? { codeHash: compiled.codeHash } : {}),
      ...(options !== undefined ? { options } : {}),
    };
    return { module, contentHash: compiled.contentHash };
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_MODULE_LOAD', ConfigErrors.moduleFailedToLoad(path, errorMessage(error)));
  }
}

/**
 * The trust domain of a module: its own, keyed by its real path (a factory
 * module with different options is one module), unless the host put it in
 * a named one.
 */
function domainKey(path: string, trustDomain: string | undefined): string {
  return trustDomain !== undefined ? `shared:${trustDomain}` : `module:${realpathSync(path)}`;
}

function checkModuleEntry(entry: ModuleEntry, index: number): void {
  const unknown = Object.keys(entry).find((key) => !MODULE_ENTRY_KEYS.includes(key));
  if (unknown !== undefined)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.unknownModuleEntryKey(index, unknown, MODULE_ENTRY_KEYS),
    );
  const { trustDomain } = entry;
  if (
    trustDomain !== undefined &&
    (typeof trustDomain !== 'string' || trustDomain.length === 0 || trustDomain.length > 200)
  ) {
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', ConfigErrors.badTrustDomain(index, trustDomain));
  }
}

function isModuleEntry(entry: unknown): entry is ModuleEntry {
  return typeof entry === 'object' && entry !== null && 'module' in entry && !isTool(entry);
}

function modulePath(entry: string | URL, index: number): string {
  if (entry instanceof URL || entry.startsWith('file:')) {
    const url = new URL(entry);
    if (url.protocol !== 'file:')
      throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.badToolEntry(index, `a ${url.protocol} URL`));
    return fileURLToPath(url);
  }
  return resolve(entry);
}
