import hashTool from '../../tools/hash.ts';
import type { ToolContext } from '../../src/core/tool.ts';
import { nowNs } from './clock.ts';
import { median } from './stats.ts';

/** A context for calling a tool's `execute` directly (the bare-call and baseline paths). */
export const directContext: ToolContext = {
  callId: 'direct',
  signal: new AbortController().signal,
  onUpdate: () => undefined,
  host: {},
  elicit: () => Promise.reject(new Error('no one to ask')),
};

export interface HashWork {
  /** Arguments for tools/hash.ts that cost about `targetMs` of CPU on this machine. */
  args: { text: string; rounds: number; algorithm: 'sha256'; progressSteps: number };
  targetMs: number;
  /** What one call measured on the main thread at calibration. */
  measuredMs: number;
}

/**
 * Sizes the hashing tool's `rounds` so one call costs about `targetMs` here.
 * Progress is off (`progressSteps: 0`) so every runner does exactly the same
 * work: the raw piscina baseline has no update channel.
 */
export async function calibrateHash(targetMs: number): Promise<HashWork> {
  const run = (rounds: number) => {
    const start = nowNs();
    hashTool.execute({ text: 'toolpool', rounds, algorithm: 'sha256', progressSteps: 0 }, directContext);
    return (nowNs() - start) / 1e6;
  };
  // Warm up, then size from a probe of about a tenth of the target, then correct once at full size.
  let rounds = 2_000;
  for (let i = 0; i < 3; i++) run(rounds);
  rounds = Math.max(100, Math.round((rounds * Math.max(1, targetMs / 10)) / run(rounds)));
  const probe = median(Array.from({ length: 3 }, () => run(rounds)));
  rounds = Math.max(100, Math.round((rounds * targetMs) / probe));
  const measuredMs = median(Array.from({ length: 3 }, () => run(rounds)));
  return { args: { text: 'toolpool', rounds, algorithm: 'sha256', progressSteps: 0 }, targetMs, measuredMs };
}
