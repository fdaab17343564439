import { ConfigErrors, errorMessage } from './errors.ts';
import { toolDefinitionProblems, toolInfoProblems } from './options-schema.ts';
import { definitionProblem, type ApprovalPolicy, type ExecutionMode, type Isolation, type OutputSchema, type ToolAnnotations, type ToolDefinition, type ToolLimits } from './tool.ts';
import { jsonSchemaOf, schemaVendor, type JsonSchema } from './tool-parameters.ts';

/**
 * Everything the host needs to know about a tool, as plain data that can
 * cross a thread or process boundary. For a module tool it is read inside a
 * worker, so no code of the module runs on the main thread.
 */
export interface ToolInfo {
  name: string;
  description: string;
  /** The JSON Schema the model sees and the host validates with. */
  parameters: JsonSchema;
  /**
   * The library of a Standard Schema (`zod`, `arktype`, `valibot`), whose own
   * validation runs before `execute` where the tool runs; left out for
   * TypeBox and JSON Schema.
   */
  schemaVendor?: string;
  label?: string;
  executionMode: ExecutionMode;
  limits: ToolLimits;
  isolation?: Isolation;
  /** Calls that may share one worker at once; left out means 1. */
  concurrency?: number;
  hasPrepare: boolean;
  hasExecute: boolean;
  /** Whether calls need a person's approval before they run (`needsApproval`); left out means never. */
  needsApproval?: ApprovalPolicy;
  /** MCP tool hints, as given; left out when the tool has none. */
  annotations?: ToolAnnotations;
  /** The JSON Schema of the result's `details`, without TypeBox's symbol keys. */
  outputSchema?: OutputSchema;
}

/**
 * Checks a tool object's fields against the options schema and returns its
 * info; throws a message naming `where` and every problem.
 */
export async function describeTool(value: unknown, where: string): Promise<ToolInfo> {
  if (typeof value !== 'object' || value === null) throw new Error(ConfigErrors.invalidToolField(where, 'it is not an object'));
  const shapeProblem = definitionProblem(value);
  const problems = [...(await toolDefinitionProblems(value)), ...(shapeProblem ? [shapeProblem] : [])];
  if (problems.length > 0) throw new Error(ConfigErrors.invalidToolField(where, problems.join('; ')));
  const tool = value as ToolDefinition;
  const vendor = schemaVendor(tool.parameters);
  return {
    name: tool.name,
    description: tool.description,
    parameters: convertedSchema(tool, where, vendor),
    ...(vendor !== undefined ? { schemaVendor: vendor } : {}),
    ...(tool.label !== undefined ? { label: tool.label } : {}),
    executionMode: tool.executionMode ?? 'parallel',
    limits: definedLimits(tool.limits),
    ...(tool.isolation !== undefined ? { isolation: tool.isolation } : {}),
    ...(tool.concurrency !== undefined && tool.concurrency > 1 ? { concurrency: tool.concurrency } : {}),
    hasPrepare: typeof tool.prepareArguments === 'function',
    hasExecute: typeof tool.execute === 'function',
    needsApproval: approvalPolicy(tool.needsApproval),
    ...(tool.annotations !== undefined ? { annotations: definedFields(tool.annotations) } : {}),
    ...(tool.outputSchema !== undefined ? { outputSchema: plainSchema(tool.outputSchema) } : {}),
  };
}

function approvalPolicy(value: unknown): ApprovalPolicy {
  if (typeof value === 'function') return 'function';
  return value === true ? 'always' : 'never';
}

/** The most a module tool's schema may hold, serialized, and how deeply it may nest. */
const MAX_SCHEMA_BYTES = 256 * 1024;
const MAX_SCHEMA_DEPTH = 64;

/**
 * The host's own check of a definition a worker reported: the worker runs
 * the tool's code, so whatever it sends is untrusted. Throws a message
 * naming `where` and every problem.
 */
export async function checkToolInfo(value: unknown, where: string): Promise<ToolInfo> {
  const problems = await toolInfoProblems(value);
  if (problems.length > 0) throw new Error(ConfigErrors.invalidToolField(where, problems.join('; ')));
  const info = value as ToolInfo;
  const schemaProblem = schemaSizeProblem(info.parameters);
  if (schemaProblem) throw new Error(ConfigErrors.invalidSchema(where, schemaProblem));
  const outputProblem = info.outputSchema !== undefined ? schemaSizeProblem(info.outputSchema) : undefined;
  if (outputProblem) throw new Error(ConfigErrors.invalidOutputSchema(where, outputProblem));
  return info;
}

function schemaSizeProblem(schema: unknown): string | undefined {
  if (depthOver(schema, MAX_SCHEMA_DEPTH)) return `it nests deeper than ${MAX_SCHEMA_DEPTH} levels`;
  const bytes = JSON.stringify(schema).length;
  return bytes > MAX_SCHEMA_BYTES ? `it is ${bytes} bytes as JSON, over the ${MAX_SCHEMA_BYTES} bytes a tool schema may have` : undefined;
}

/** Iterative, so a hostile depth cannot overflow the host's stack. */
function depthOver(root: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Object.values(value)) stack.push([child, depth + 1]);
  }
  return false;
}

/** A limits object the options schema accepted, without the keys left undefined. */
export function definedLimits(limits: ToolLimits | undefined): ToolLimits {
  return definedFields(limits ?? {});
}

/** An options object without the keys left undefined (they would cross to the host as keys). */
function definedFields<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T;
}

/** A JSON Schema without TypeBox's symbol keys, as sent to clients and to Ajv. */
function plainSchema<T extends object>(schema: T): T {
  return JSON.parse(JSON.stringify(schema)) as T;
}

/** The JSON Schema sent to the model and to Ajv; a Standard Schema that cannot give one is a configuration error. */
function convertedSchema(tool: ToolDefinition, where: string, vendor: string | undefined): JsonSchema {
  try {
    return jsonSchemaOf(tool.parameters);
  } catch (error) {
    const message = errorMessage(error);
    throw new Error(ConfigErrors.invalidSchema(where, vendor !== undefined ? ConfigErrors.notConvertible(vendor, message) : message));
  }
}
