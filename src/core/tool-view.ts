import { ConfigErrors } from './errors.ts';
import { definitionProblem } from './tool.ts';
import { jsonSchemaOf, schemaVendor } from './tool-parameters.ts';
import { ToolpoolError } from './error-codes.ts';

/** What a function-valued field of a definition becomes when the definition crosses to the host as plain data. */
export const FUNCTION_FIELD = '[function]';

/**
 * A tool definition as plain data, made where the tool's code lives (for a
 * module tool, in its worker): every field as given, functions replaced by
 * FUNCTION_FIELD, the parameters schema turned into JSON Schema (a Zod or
 * Valibot schema can only be converted where its library is). The host
 * checks it (tool-info.ts), so the worker needs no validator of its own:
 * loading Ajv in every worker was most of a worker's start.
 */
export interface DefinitionView {
  definition: Record<string, unknown>;
  /** The Standard Schema library of the parameters, when they are one. */
  schemaVendor?: string;
  /** What the definition's shape is missing (its parameters are no schema, it has no execute). */
  problem?: string;
}

export function definitionView(value: unknown, where: string): DefinitionView {
  if (typeof value !== 'object' || value === null)
    throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.invalidToolField(where, 'it is not an object'));
  const problem = definitionProblem(value);
  const vendor = schemaVendor((value as { parameters?: unknown }).parameters);
  const definition: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    // Parameters first: an ArkType schema is a function, and still a schema.
    if (key === 'parameters')
      definition[key] = problem === undefined ? convertedSchema(field, where, vendor) : undefined;
    else if (typeof field === 'function') definition[key] = FUNCTION_FIELD;
    else if (key === 'outputSchema' && typeof field === 'object' && field !== null) definition[key] = plainData(field);
    else definition[key] = field;
  }
  return {
    definition,
    ...(vendor !== undefined ? { schemaVendor: vendor } : {}),
    ...(problem !== undefined ? { problem } : {}),
  };
}

/** The JSON Schema sent to the model and to Ajv; a Standard Schema that cannot give one is a configuration error. */
function convertedSchema(parameters: unknown, where: string, vendor: string | undefined): unknown {
  try {
    return jsonSchemaOf(parameters as never);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ToolpoolError(
      'TOOLPOOL_ERR_INVALID_TOOL',
      ConfigErrors.invalidSchema(where, vendor !== undefined ? ConfigErrors.notConvertible(vendor, message) : message),
    );
  }
}

/** A schema without TypeBox's symbol keys. */
function plainData(value: object): unknown {
  return JSON.parse(JSON.stringify(value));
}
