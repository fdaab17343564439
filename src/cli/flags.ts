import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliErrors } from '../core/errors.ts';
import { usageError } from './errors.ts';

/**
 * `node:util` parseArgs in strict mode, with its errors made usage errors
 * for `command` (exit code 2); an unknown flag is answered with the
 * nearest known one ("did you mean --tools?").
 */
export function parseFlags<T extends ParseArgsConfig>(command: string, config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    const unknown = (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'(-{1,2}[^']*)'/.exec(message)?.[1] : undefined;
    if (unknown !== undefined) throw usageError(command, unknownFlag(unknown, Object.keys(config.options ?? {})));
    throw usageError(command, message.replace(/\. To specify a positional argument.*$/, '.'));
  }
}

function unknownFlag(flag: string, names: string[]): string {
  const known = names.map((name) => `--${name}`);
  const nearest = nearestFlag(flag, known);
  return nearest ? CliErrors.unknownFlagNear(flag, nearest) : CliErrors.unknownFlag(flag, known);
}

/**
 * The known flag meant: the only one that starts with what was typed
 * (`--timeout` for `--timeout-ms`), or the one fewest edits away if that is
 * close enough to be a typo rather than another word.
 */
export function nearestFlag(flag: string, known: readonly string[]): string | undefined {
  const bare = flag.replace(/^-+/, '');
  const extended = known.filter((candidate) => candidate.replace(/^-+/, '').startsWith(bare));
  if (bare.length >= 3 && extended.length === 1) return extended[0];
  let best: { flag: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(bare, candidate.replace(/^-+/, ''));
    if (!best || distance < best.distance) best = { flag: candidate, distance };
  }
  const allowed = Math.max(1, Math.floor(bare.length / 3));
  return best && best.distance <= allowed ? best.flag : undefined;
}

/** Levenshtein distance, transpositions counted as one edit (`toosl` → `tools`). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i]![j] = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i]![j] = Math.min(rows[i]![j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

/** The executor options the CLI's flags set: an executor's error about one names the flag the user typed. */
const FLAG_OF_OPTION: Readonly<Record<string, string>> = {
  isolation: '--isolation',
  'limits.timeoutMs': '--timeout-ms',
  'permissions.fsRead': '--allow-read',
  'permissions.fsWrite': '--allow-write',
};

/** `createExecutor: option isolation must be …` → `--isolation must be …`, for the options a flag set. */
export function inFlagTerms(message: string): string {
  const named = message.replace(/\boption ([\w.]+)(\[\d+\])?/g, (whole, option: string) => (Object.hasOwn(FLAG_OF_OPTION, option) ? FLAG_OF_OPTION[option]! : whole));
  return named === message ? message : named.replace(/^createExecutor: /, '');
}
