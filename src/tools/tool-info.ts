import { ConfigErrors } from '../core/errors.ts';
import { toolDefinitionProblems, toolInfoProblems } from './options-check.ts';
import type {
  ApprovalPolicy,
  ExecutionMode,
  Isolation,
  OutputSchema,
  ToolAnnotations,
  ToolDefinition,
  ToolLimits,
} from '../core/tool.ts';
import type { JsonSchema } from '../core/tool-parameters.ts';
import { definitionView, FUNCTION_FIELD, type DefinitionView } from '../core/tool-view.ts';
import { ToolpoolError } from '../core/error-codes.ts';

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
 * info; throws a message naming `where` and every problem. For an inline
 * tool, on this thread.
 */
export function describeTool(value: unknown, where: string): ToolInfo {
  return describeView(definitionView(value, where), where);
}

/**
 * The info of a definition read where the tool lives (see tool-view.ts):
 * every field checked against the options schema here, on the host, which
 * for a module tool also means the worker's word is checked, not taken.
 */
export function describeView(view: DefinitionView, where: string): ToolInfo {
  if (typeof view !== 'object' || view === null || typeof view.definition !== 'object' || view.definition === null) {
    throw new ToolpoolError(
      'TOOLPOOL_ERR_INVALID_TOOL',
      ConfigErrors.invalidToolField(where, 'its definition is not an object'),
    );
  }
  const problems = [
    ...toolDefinitionProblems(view.definition),
    ...(typeof view.problem === 'string' ? [view.problem] : []),
  ];
  if (problems.length > 0)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidToolField(where, problems.join('; ')));
  // Checked against the options schema above; the function fields are FUNCTION_FIELD markers here.
  const tool = view.definition as Omit<ToolDefinition, 'prepareArguments' | 'execute'> & {
    prepareArguments?: unknown;
    execute?: unknown;
  };
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as JsonSchema,
    ...(typeof view.schemaVendor === 'string' ? { schemaVendor: view.schemaVendor } : {}),
    ...(tool.label !== undefined ? { label: tool.label } : {}),
    executionMode: tool.executionMode ?? 'parallel',
    limits: definedLimits(tool.limits),
    ...(tool.isolation !== undefined ? { isolation: tool.isolation } : {}),
    ...(tool.concurrency !== undefined && tool.concurrency > 1 ? { concurrency: tool.concurrency } : {}),
    hasPrepare: tool.prepareArguments === FUNCTION_FIELD,
    hasExecute: tool.execute === FUNCTION_FIELD,
    needsApproval: approvalPolicy(tool.needsApproval),
    ...(tool.annotations !== undefined ? { annotations: definedFields(tool.annotations) } : {}),
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
  };
}

function approvalPolicy(value: unknown): ApprovalPolicy {
  if (value === FUNCTION_FIELD) return 'function';
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
export function checkToolInfo(value: unknown, where: string): ToolInfo {
  const problems = toolInfoProblems(value);
  if (problems.length > 0)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidToolField(where, problems.join('; ')));
  const info = value as ToolInfo;
  const schemaProblem = schemaSizeProblem(info.parameters);
  if (schemaProblem)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidSchema(where, schemaProblem));
  const outputProblem = info.outputSchema !== undefined ? schemaSizeProblem(info.outputSchema) : undefined;
  if (outputProblem)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidOutputSchema(where, outputProblem));
  return info;
}

function schemaSizeProblem(schema: unknown): string | undefined {
  if (depthOver(schema, MAX_SCHEMA_DEPTH)) return `it nests deeper than ${MAX_SCHEMA_DEPTH} levels`;
  const bytes = JSON.stringify(schema).length;
  return bytes > MAX_SCHEMA_BYTES
    ? `it is ${bytes} bytes as JSON, over the ${MAX_SCHEMA_BYTES} bytes a tool schema may have`
    : undefined;
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
