import type { Isolation } from '../core/tool.ts';

/** How much each tier hides from a tool; a stronger tier stops everything a weaker one does. */
const STRENGTH: Record<Isolation, number> = { worker: 0, process: 1, sandbox: 2 };

/**
 * The tier a module tool runs in: the executor's, or a stronger one the tool
 * asks for. A tool can never lower the host's choice (a tool module that
 * says `isolation: 'worker'` under a process-tier executor still runs in a
 * child process).
 */
export function strongerIsolation(host: Isolation, tool: Isolation | undefined): Isolation {
  return tool !== undefined && STRENGTH[tool] > STRENGTH[host] ? tool : host;
}

/** Whether `tier` hides less from a tool than `floor` does; no tier at all (an inline tool, on the host thread) is weaker than every tier. */
export function isWeakerIsolation(tier: Isolation | undefined, floor: Isolation): boolean {
  return tier === undefined || STRENGTH[tier] < STRENGTH[floor];
}
