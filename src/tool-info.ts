import type { TSchema } from '@sinclair/typebox';
import { ConfigErrors } from './errors.ts';
import type { ExecutionMode, Isolation, ToolLimits } from './tool.ts';

/**
 * Everything the host needs to know about a tool, as plain data that can
 * cross a thread or process boundary. For a module tool it is read inside a
 * worker, so no code of the module runs on the main thread.
 */
export interface ToolInfo {
  name: string;
  description: string;
  parameters: TSchema;
  label?: string;
  executionMode: ExecutionMode;
  limits: ToolLimits;
  isolation?: Isolation;
  hasPrepare: boolean;
  hasExecute: boolean;
}

const LIMIT_KEYS = ['timeoutMs', 'maxMemoryMb', 'maxResultBytes', 'abortGraceMs'] as const;

/** Checks a tool object's fields and returns its info; throws a message naming `where` and the problem. */
export function describeTool(value: unknown, where: string): ToolInfo {
  if (typeof value !== 'object' || value === null) throw new Error(ConfigErrors.invalidToolField(where, 'it is not an object'));
  const tool = value as Record<string, unknown>;
  const bad = (problem: string) => new Error(ConfigErrors.invalidToolField(where, problem));
  if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
    throw bad(`"name" must be 1-64 letters, digits, "_" or "-" (got ${JSON.stringify(tool.name)})`);
  }
  if (typeof tool.description !== 'string') throw bad('"description" must be a string');
  if (typeof tool.parameters !== 'object' || tool.parameters === null) throw bad('"parameters" must be a schema object (Type.Object({...}))');
  if (tool.label !== undefined && typeof tool.label !== 'string') throw bad('"label" must be a string');
  if (tool.executionMode !== undefined && tool.executionMode !== 'parallel' && tool.executionMode !== 'sequential') {
    throw bad('"executionMode" must be "parallel" or "sequential"');
  }
  if (tool.isolation !== undefined && tool.isolation !== 'worker' && tool.isolation !== 'process' && tool.isolation !== 'sandbox') {
    throw bad('"isolation" must be "worker", "process" or "sandbox"');
  }
  if (tool.prepareArguments !== undefined && typeof tool.prepareArguments !== 'function') throw bad('"prepareArguments" must be a function');
  if (tool.execute !== undefined && typeof tool.execute !== 'function') throw bad('"execute" must be a function');
  return {
    name: tool.name,
    description: tool.description,
    parameters: plainSchema(tool.parameters as TSchema),
    ...(tool.label !== undefined ? { label: tool.label as string } : {}),
    executionMode: (tool.executionMode as ExecutionMode | undefined) ?? 'parallel',
    limits: checkLimits(tool.limits, `${where} "limits"`),
    ...(tool.isolation !== undefined ? { isolation: tool.isolation as Isolation } : {}),
    hasPrepare: typeof tool.prepareArguments === 'function',
    hasExecute: typeof tool.execute === 'function',
  };
}

/** Validates a limits object (tool- or executor-level); unknown keys and bad numbers are errors. */
export function checkLimits(value: unknown, where: string): ToolLimits {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw new Error(`${where} must be an object`);
  const limits: ToolLimits = {};
  for (const [key, raw] of Object.entries(value)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(key)) {
      throw new Error(`${where}: unknown limit "${key}"; known limits are ${LIMIT_KEYS.join(', ')}`);
    }
    if (raw === undefined) continue;
    if (typeof raw !== 'number' || !Number.isFinite(raw) || raw <= 0) {
      throw new Error(`${where}: ${key} must be a positive number (got ${JSON.stringify(raw)})`);
    }
    limits[key as (typeof LIMIT_KEYS)[number]] = raw;
  }
  return limits;
}

/** The JSON Schema without TypeBox's symbol keys, as sent to the model and to Ajv. */
function plainSchema(schema: TSchema): TSchema {
  return JSON.parse(JSON.stringify(schema)) as TSchema;
}
