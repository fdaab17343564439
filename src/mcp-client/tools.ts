import type { Tool as McpTool } from '@modelcontextprotocol/client';
import { McpErrors } from '../core/errors.ts';
import { hostLimits, resolveLimits } from '../core/limits.ts';
import { compileDetailsValidator } from '../tools/output-validation.ts';
import type { RegisteredTool } from '../tools/registered-tool.ts';
import type { RunJob, RunOutcome } from '../core/runner.ts';
import { checkToolInfo, type ToolInfo } from '../tools/tool-info.ts';
import type { JsonSchema } from '../core/tool-parameters.ts';
import type { ApprovalPolicy, OutputSchema, ToolAnnotations, ToolLimits } from '../core/tool.ts';
import { compileArgumentValidator } from '../tools/validation.ts';
import type { McpApproval } from '../core/mcp-config.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/** What turns a server's tools into executor tools. */
export interface ToolMapping {
  server: string;
  /** The executor's limits, with the server's `timeoutMs` over them. */
  limits: ToolLimits;
  toolLimits: Readonly<Record<string, ToolLimits>>;
  /** `createExecutor({ coerceArguments })`; default on. */
  coerceArguments?: boolean;
  needsApproval: McpApproval | undefined;
  /** Runs one call of the server's tool `toolName`. */
  call(toolName: string, job: RunJob): Promise<RunOutcome>;
}

const ANNOTATION_KEYS = ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/**
 * One MCP tool as an executor tool `SERVER_tool`. The server is third-party
 * code, so its definition gets the checks a module's worker report gets
 * (sizes, depth, names), its schemas run on the host with linear-time
 * patterns; its `$schema` stays, and names the Ajv dialect it is checked in.
 * Throws a problem text when the tool cannot be used; the caller leaves it out.
 */
export async function executorTool(tool: McpTool, mapping: ToolMapping): Promise<RegisteredTool> {
  const name = `${mapping.server}_${tool.name}`;
  const where = `${JSON.stringify(tool.name)} of MCP server "${mapping.server}"`;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', McpErrors.toolNameInvalid(name));
  const info = checkToolInfo(toolInfo(name, tool, policy(mapping.needsApproval)), where);
  const approve = mapping.needsApproval;
  return {
    info,
    source: `MCP server "${mapping.server}" (tool "${tool.name}")`,
    validate: compileArgumentValidator(name, where, info.parameters, {
      untrusted: true,
      coerce: mapping.coerceArguments !== false,
    }),
    ...(info.outputSchema
      ? { checkDetails: compileDetailsValidator(name, where, info.outputSchema, { untrusted: true }) }
      : {}),
    limits: resolveLimits(hostLimits(mapping.limits, mapping.toolLimits, name), {}),
    runner: {
      prepare: () => Promise.reject(new Error('MCP tools have no prepareArguments')),
      // The host's own function, with the server's own tool name.
      needsApproval: async (args) => (typeof approve === 'function' ? approve(tool.name, args) : approve === true),
      execute: (job) => mapping.call(tool.name, job),
    },
  };
}

function toolInfo(name: string, tool: McpTool, needsApproval: ApprovalPolicy): ToolInfo {
  const annotations = annotationsOf(tool);
  const title = tool.title ?? tool.annotations?.title;
  return {
    name,
    description: tool.description ?? '',
    parameters: withoutDraft(tool.inputSchema),
    ...(typeof title === 'string' ? { label: title } : {}),
    executionMode: 'parallel',
    limits: {},
    hasPrepare: false,
    hasExecute: true,
    needsApproval,
    ...(annotations ? { annotations } : {}),
    ...(tool.outputSchema ? { outputSchema: withoutDraft(tool.outputSchema) as OutputSchema } : {}),
  };
}

function policy(approval: McpApproval | undefined): ApprovalPolicy {
  if (typeof approval === 'function') return 'function';
  return approval === true ? 'always' : 'never';
}

/** MCP's five hints, those of the right type; anything else a server put there is not carried. */
function annotationsOf(tool: McpTool): ToolAnnotations | undefined {
  const given = tool.annotations as Record<string, unknown> | undefined;
  if (!given) return undefined;
  const hints: Record<string, unknown> = {};
  for (const key of ANNOTATION_KEYS) {
    const value = given[key];
    if (key === 'title' ? typeof value === 'string' : typeof value === 'boolean') hints[key] = value;
  }
  return Object.keys(hints).length > 0 ? (hints as ToolAnnotations) : undefined;
}

/** A copy as plain data, `$schema` kept: the host validates it in the dialect it names (see validation.ts), and serve passes it on as written. */
function withoutDraft(schema: object): JsonSchema {
  return JSON.parse(JSON.stringify(schema)) as JsonSchema;
}
