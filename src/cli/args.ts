import { usageError } from './errors.ts';

/** The `--help`/`-h` flag every command has. */
export const helpFlag = { help: { type: 'boolean', short: 'h' } } as const;

/** A positive integer flag value, or a usage error naming the flag. */
export function integerFlag(command: string, flag: string, value: string | undefined, min = 1): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min) throw usageError(command, `--${flag} must be an integer >= ${min}, got "${value}"`);
  return number;
}
