import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliErrors } from '../core/errors.ts';
import { nearestName } from '../core/nearest-name.ts';
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
    const unknown =
      (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? /'(-{1,2}[^']*)'/.exec(message)?.[1]
        : undefined;
    if (unknown !== undefined) throw usageError(command, unknownFlag(unknown, Object.keys(config.options ?? {})));
    throw usageError(command, message.replace(/\. To specify a positional argument.*$/, '.'));
  }
}

function unknownFlag(flag: string, names: string[]): string {
  const known = names.map((name) => `--${name}`);
  const nearest = nearestFlag(flag, known);
  return nearest ? CliErrors.unknownFlagNear(flag, nearest) : CliErrors.unknownFlag(flag, known);
}

/** The known flag meant (see nearestName): `--timeout` for `--timeout-ms`, `--tools` for `--toosl`. */
export function nearestFlag(flag: string, known: readonly string[]): string | undefined {
  const bare = known.map((candidate) => candidate.replace(/^-+/, ''));
  const nearest = nearestName(flag.replace(/^-+/, ''), bare);
  return nearest === undefined ? undefined : known[bare.indexOf(nearest)];
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
  const named = message.replace(/\boption ([\w.]+)(\[\d+\])?/g, (whole, option: string) =>
    Object.hasOwn(FLAG_OF_OPTION, option) ? FLAG_OF_OPTION[option]! : whole,
  );
  return named === message ? message : named.replace(/^createExecutor: /, '');
}
