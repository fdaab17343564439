import type { ToolLimits } from './tool.ts';

export type ResolvedLimits = Required<ToolLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = {
  timeoutMs: 30_000,
  maxMemoryMb: 256,
  maxResultBytes: 8 * 1024 * 1024,
  abortGraceMs: 1_000,
};

/** A tool's own limits win over the executor's, which win over the defaults. */
export function resolveLimits(executor: ToolLimits, tool: ToolLimits): ResolvedLimits {
  return { ...DEFAULT_LIMITS, ...executor, ...tool };
}
