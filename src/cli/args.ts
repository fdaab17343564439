import { usageError } from './errors.ts';

/** The `--help`/`-h` flag every command has. */
export const helpFlag = { help: { type: 'boolean', short: 'h' } } as const;

/** A positive integer flag value, or a usage error naming the flag. */
export function integerFlag(command: string, flag: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min)
    throw usageError(command, `--${flag} must be an integer >= ${min}, got "${value}"`);
  return number;
}

/** Repeatable or comma-separated flag values, trimmed, without empty ones. */
export function splitList(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
}

/**
 * `node:util` parseArgs has no flag whose value may be left out: a `--flag`
 * given alone (last, or before another option) becomes `--flag=<alone>`.
 * Only for commands without positional arguments, where that is unambiguous.
 */
export function bareFlagValue(argv: readonly string[], flag: string, alone: string): string[] {
  return argv.map((arg, index) => {
    if (arg !== `--${flag}`) return arg;
    const next = argv[index + 1];
    return next === undefined || next.startsWith('-') ? `--${flag}=${alone}` : arg;
  });
}
