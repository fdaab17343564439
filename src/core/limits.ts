import type { ToolLimits } from './tool.ts';

export type ResolvedLimits = Required<ToolLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = {
  timeoutMs: 30_000,
  maxMemoryMb: 256,
  maxResultBytes: 8 * 1024 * 1024,
  abortGraceMs: 1_000,
};

/** The smallest heap a worker starts with; below it a pool would never get a worker to run on. */
export const MIN_MEMORY_MB = 16;

/**
 * The host's limits over the defaults; a tool's own limits may only
 * tighten them. A tool module is code the host may not trust: it must not
 * grant itself more time, memory or result size than the host allows. To
 * give one tool more, the host sets it in `toolLimits` (see `hostLimits`).
 */
export function resolveLimits(host: ToolLimits, tool: ToolLimits): ResolvedLimits {
  const resolved: ResolvedLimits = { ...DEFAULT_LIMITS, ...host };
  for (const key of Object.keys(resolved) as Array<keyof ResolvedLimits>) {
    const own = tool[key];
    if (own !== undefined && own < resolved[key]) resolved[key] = own;
  }
  return resolved;
}

/**
 * What the host allows one tool: its `toolLimits` entry over the executor's
 * `limits`, key by key. The host's own word, so it may loosen as well as
 * tighten.
 */
export function hostLimits(
  executor: ToolLimits,
  toolLimits: Readonly<Record<string, ToolLimits>>,
  toolName: string,
): ToolLimits {
  return Object.hasOwn(toolLimits, toolName) ? { ...executor, ...toolLimits[toolName] } : executor;
}

/** `limits` with each of `tighter`'s fields that is lower in its place: a caller's limits for one batch can only tighten a tool's. */
export function tightenLimits(limits: ResolvedLimits, tighter: ToolLimits): ResolvedLimits {
  return resolveLimits(limits, tighter);
}

const LIMIT_KEYS: ReadonlySet<string> = new Set(Object.keys(DEFAULT_LIMITS));

/** Says what is wrong with a batch's `limits` option, or undefined: known keys, positive finite numbers. */
export function batchLimitsProblem(limits: unknown): string | undefined {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) return 'must be an object of limits';
  for (const [key, value] of Object.entries(limits)) {
    if (!LIMIT_KEYS.has(key))
      return `has an unknown limit "${key.slice(0, 100)}"; the limits are ${[...LIMIT_KEYS].join(', ')}`;
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0))
      return `.${key} must be a positive number`;
    if (key === 'maxMemoryMb' && (value as number) < MIN_MEMORY_MB)
      return `.maxMemoryMb must be at least ${MIN_MEMORY_MB}`;
  }
  return undefined;
}
