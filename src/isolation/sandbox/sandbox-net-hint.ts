import { SandboxErrors } from '../../core/errors.ts';
import type { RunOutcome } from '../../core/runner.ts';

/**
 * A host the sandbox cannot reach fails as the tool's own error text: a
 * name that does not resolve (there is no DNS inside; only listed names
 * resolve), or a listed name on a port that was not listed (nothing listens
 * on its loopback address there). Those texts get a note naming
 * `permissions.net`, the option that would let the call through.
 */
const UNREACHABLE = [/getaddrinfo (?:ENOTFOUND|EAI_AGAIN) ([^\s()]+)/, /connect ECONNREFUSED (127\.\d+\.\d+\.\d+:\d+)/];

export function withSandboxNetHint(outcome: RunOutcome): RunOutcome {
  if (outcome.ok) return outcome;
  for (const pattern of UNREACHABLE) {
    const target = pattern.exec(outcome.error)?.[1];
    if (target !== undefined) return { ...outcome, error: `${outcome.error} ${SandboxErrors.netUnreachable(target)}` };
  }
  return outcome;
}
