import type { ErrorObject, ValidateFunction } from 'ajv';
import { ConfigErrors, preview } from '../core/errors.ts';
import * as generated from './generated/option-validators.ts';
import { nearestName } from '../core/nearest-name.ts';
import type { ExecutorOptions } from '../core/options.ts';
import { ToolpoolTypeError } from '../core/error-codes.ts';

/**
 * The checks of `createExecutor`'s options, of `defineTool` definitions and
 * of the definitions workers report, with the validators compiled from
 * src/tools/options-schema.ts ahead of time (see that file): unknown keys are
 * refused with the list of known ones, and every wrong value gets a message
 * saying what it must be.
 */
const validateExecutorOptions = generated.validateExecutorOptions as ValidateFunction;
const validateToolDefinition = generated.validateToolDefinition as ValidateFunction;
const validateToolInfo = generated.validateToolInfo as ValidateFunction;

/** Throws a TypeError naming every wrong or unknown option of `createExecutor`. */
export function checkExecutorOptions(options: unknown): void {
  if (!validateExecutorOptions(options))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.badOptions(problemsOf(validateExecutorOptions.errors ?? [], (path) => `option ${path}`)),
    );
  const { tools, mcpServers } = options as ExecutorOptions;
  if (tools === undefined && mcpServers === undefined)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      ConfigErrors.noTools(ConfigErrors.missingOption('option tools', generated.toolsExpected)),
    );
}

/** Checks a tool's fields; returns the problems (empty when it is valid). */
export function toolDefinitionProblems(tool: unknown): string[] {
  if (validateToolDefinition(tool)) return [];
  return problemsOf(validateToolDefinition.errors ?? [], (path) => `"${path}"`);
}

/** Checks a definition a worker reported; returns the problems (empty when it is valid). */
export function toolInfoProblems(info: unknown): string[] {
  if (validateToolInfo(info)) return [];
  return problemsOf(validateToolInfo.errors ?? [], (path) => `"${path}"`);
}

/** Problems named one by one; past these, only how many more (a message stays readable, and bounded). */
const MAX_PROBLEMS = 10;

/** One line per problem; errors inside a union are folded into the union's own "must be …". */
function problemsOf(errors: ErrorObject[], field: (path: string) => string): string[] {
  const unions = errors.filter((error) => error.keyword === 'anyOf').map((error) => `${error.schemaPath}/`);
  const problems = [
    ...new Set(
      errors
        .filter((error) => !unions.some((prefix) => error.schemaPath.startsWith(prefix)))
        .map((error) => problemOf(error, field)),
    ),
  ];
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), ConfigErrors.moreProblems(problems.length - MAX_PROBLEMS)];
}

function problemOf(error: ErrorObject, field: (path: string) => string): string {
  const path = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent = error.parentSchema as
    | { properties?: Record<string, { expected?: string; properties?: Record<string, unknown> }>; expected?: string }
    | undefined;
  const join = (key: string) => (path === '' ? key : `${path}.${key}`);
  if (error.keyword === 'additionalProperties') {
    const key = String(params.additionalProperty).slice(0, 200);
    const known = Object.keys(parent?.properties ?? {});
    return ConfigErrors.unknownOption(
      join(key),
      path,
      known,
      nearestName(key, known) ?? nestedOption(key, parent?.properties ?? {}),
    );
  }
  if (error.keyword === 'required') {
    const key = String(params.missingProperty);
    return ConfigErrors.missingOption(field(join(key)), parent?.properties?.[key]?.expected ?? 'given');
  }
  const label = path === '' ? field('(options)') : field(path);
  return ConfigErrors.wrongOption(
    label,
    parent?.expected ?? (error.message ?? 'valid').replace(/^must be /, ''),
    preview(error.data, 80),
  );
}

/** An option given one level too high (`timeoutMs` for `limits.timeoutMs`): the known object option that has it. */
function nestedOption(
  key: string,
  properties: Record<string, { properties?: Record<string, unknown> }>,
): string | undefined {
  const owner = Object.keys(properties).find((name) => Object.hasOwn(properties[name]?.properties ?? {}, key));
  return owner === undefined ? undefined : `${owner}.${key}`;
}

/** `/limits/timeoutMs` → `limits.timeoutMs`; `/permissions/fsRead/0` → `permissions.fsRead[0]`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce(
      (path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment),
      '',
    )
    .slice(0, 200); // an option name can be as long as a caller likes
}
