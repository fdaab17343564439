import type { ValidateFunction } from 'ajv';
import { ConfigErrors, ToolErrors, errorMessage } from '../core/errors.ts';
import { linearRegExp } from '../core/linear-regexp.ts';
import type { OutputSchema, ToolResult } from '../core/tool.ts';
import type { JsonSchema } from '../core/tool-parameters.ts';
import { compileWithFormats, describeProblem, forAjv, schemaAjv } from './validation.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/**
 * Checking what a tool returned against its `outputSchema`. Unlike the
 * arguments' Ajv these instances neither coerce nor fill defaults: the
 * details are the tool's own data and are reported, never changed. A module
 * tool's schema is the module's (untrusted) and runs on the host, so its
 * patterns run in linear time, as for its parameters.
 */
const detailsAjvs = new Map<string, ReturnType<typeof schemaAjv>>();

/** The error text for a result whose details do not match, or nothing when they do. */
export type DetailsValidator = (result: ToolResult) => string | undefined;

/**
 * Compiles the check of a tool's `details`, once, at registration. Throws a
 * configuration error naming the tool when the schema itself is broken.
 */
export function compileDetailsValidator(
  toolName: string,
  where: string,
  schema: OutputSchema,
  trust: { untrusted?: boolean } = {},
): DetailsValidator {
  let validate: ValidateFunction;
  try {
    // Each dialect its own Ajv class (see forAjv), one instance per dialect and trust.
    const given = forAjv(schema as JsonSchema);
    const key = `${trust.untrusted ? 'untrusted' : 'trusted'} ${given.dialect}`;
    let ajv = detailsAjvs.get(key);
    if (!ajv) {
      ajv = schemaAjv({ coerce: false, dialect: given.dialect, ...(trust.untrusted ? { regExp: linearRegExp } : {}) });
      detailsAjvs.set(key, ajv);
    }
    validate = compileWithFormats(ajv, given.schema);
  } catch (error) {
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidOutputSchema(where, errorMessage(error)));
  }
  return (result) => {
    if (validate(result.details)) return undefined;
    const errors = validate.errors ?? [];
    return ToolErrors.detailsDoNotMatch(
      toolName,
      errors.slice(0, 20).map((error) => describeProblem(error, schema as JsonSchema)),
      result.details,
      errors.length,
    );
  };
}
