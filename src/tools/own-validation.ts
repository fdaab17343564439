import type { StandardSchemaV1 } from '@standard-schema/spec';
import { ToolErrors } from '../core/errors.ts';
import { fieldPath } from '../core/field-path.ts';
import { ownValidation } from '../core/tool-parameters.ts';
import type { Tool, ToolContext, ToolResult } from '../core/tool.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/** Issues described one by one; past these the error text says how many more. */
const MAX_ISSUES = 20;

/**
 * Runs `execute` with what the schema's own validation made of the
 * arguments: a Standard Schema's refinements, transforms and defaults apply
 * after the host's JSON Schema check, where the tool's code runs (in the
 * worker for a module tool, on the host for an inline one). When it finds
 * issues the tool does not run: the call ends with a validation error that
 * names the fields, like the host's. TypeBox and JSON Schema tools go
 * straight to `execute`, synchronously.
 */
export function executeTool(tool: Tool, args: unknown, ctx: ToolContext): ToolResult | Promise<ToolResult> {
  const schema = ownValidation(tool.parameters);
  if (!schema) return tool.execute(args as never, ctx);
  const checked = schema.validate(args);
  if (typeof (checked as { then?: unknown }).then === 'function') {
    return (checked as Promise<StandardSchemaV1.Result<unknown>>).then((result) =>
      executeChecked(tool, args, result, ctx),
    );
  }
  return executeChecked(tool, args, checked as StandardSchemaV1.Result<unknown>, ctx);
}

function executeChecked(tool: Tool, args: unknown, result: StandardSchemaV1.Result<unknown>, ctx: ToolContext) {
  if (result.issues) {
    const problems = result.issues.slice(0, MAX_ISSUES).map(describeIssue);
    throw new ToolpoolError(
      'TOOLPOOL_ERR_TOOL_FAILED',
      ToolErrors.validationFailed(tool.name, problems, args, result.issues.length),
    );
  }
  return tool.execute(result.value as never, ctx);
}

function describeIssue(issue: StandardSchemaV1.Issue): string {
  const segments = (issue.path ?? []).map((segment) =>
    typeof segment === 'object' && segment !== null ? segment.key : segment,
  );
  return `${fieldPath(segments)}: ${String(issue.message)}`;
}
