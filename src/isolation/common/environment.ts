import { ConfigErrors } from '../../core/errors.ts';
import type { EnvOption } from '../../core/options.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

export type { EnvOption };

export function toolEnvironment(
  option: EnvOption | undefined,
  host: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  if (option === undefined) return {};
  if (Array.isArray(option)) {
    const env: Record<string, string> = {};
    for (const name of option as readonly unknown[]) {
      if (typeof name !== 'string')
        throw new ToolpoolTypeError(
          'TOOLPOOL_ERR_INVALID_OPTION',
          ConfigErrors.badOption('env', 'must list variable names as strings'),
        );
      const value = host[name];
      if (value !== undefined) env[name] = value;
    }
    return env;
  }
  if (typeof option !== 'object' || option === null) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.badOption('env', 'must be a list of variable names or an object of name → value'),
    );
  }
  for (const [name, value] of Object.entries(option)) {
    if (typeof value !== 'string')
      throw new ToolpoolTypeError(
        'TOOLPOOL_ERR_INVALID_OPTION',
        ConfigErrors.badOption(`env.${name}`, 'must be a string'),
      );
  }
  return { ...(option as Record<string, string>) };
}
