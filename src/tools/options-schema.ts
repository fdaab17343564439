import { Type, type TSchema } from '@sinclair/typebox';
import { MIN_MEMORY_MB } from '../core/limits.ts';
import type { ExecutorOptions, Permissions, WorkerOptions } from '../core/options.ts';
import type { McpHttpServer, McpServerPermissions, McpStdioServer } from '../core/mcp-config.ts';
import type { ToolInfo } from './tool-info.ts';
import type { ToolAnnotations, ToolDefinition, ToolLimits } from '../core/tool.ts';

/**
 * The options of `createExecutor` and `defineTool`, described once with
 * TypeBox and checked with Ajv: unknown keys are refused with the list of
 * known ones, and every wrong value gets a message saying what it must be.
 * To add an option, add it here (and to its TypeScript interface), then run
 * `npm run generate`: the `satisfies` clauses below fail to compile when an
 * interface has an option that is not described here, and a test fails
 * while the generated validators are not those of these schemas.
 *
 * This file is not loaded at run time: scripts/generate-option-validators.ts
 * compiles these schemas once into src/tools/generated/option-validators.ts
 * (Ajv's standalone code), which options-check.ts uses. Building the
 * schemas with TypeBox and compiling them with Ajv took ~150 ms of CPU of
 * every executor's start.
 *
 * Each schema carries `expected`, the words that complete "must be …" in
 * the error text.
 */

/** A value that must be a function; JSON Schema has no such type, so a small `typeof` keyword checks it. */
function FunctionOption(expected = 'a function'): TSchema {
  return Type.Unsafe({ typeof: 'function', expected });
}

/**
 * A tool definition's function field, as the host sees it: the function
 * itself, or the marker it became when the definition crossed from a worker
 * as plain data (see tool-view.ts).
 */
function FunctionField(expected = 'a function'): TSchema {
  return Type.Unsafe({ functionField: true, expected });
}

/** One of a few string values, as an `enum` (TypeBox literal unions would give one error per literal). */
function OneOf(values: readonly string[]): TSchema {
  const words = values.map((value) => JSON.stringify(value));
  return Type.Unsafe({
    type: 'string',
    enum: [...values],
    expected: `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`,
  });
}

function PositiveNumber(): TSchema {
  return Type.Number({ exclusiveMinimum: 0, expected: 'a positive number' });
}

function IntegerAtLeast(minimum: number): TSchema {
  return Type.Integer({ minimum, expected: `an integer >= ${minimum}` });
}

/** A tool's calls per worker: bounded, because a worker holds that many calls' state at once. */
export const MAX_CONCURRENCY = 256;
const CONCURRENCY = Type.Integer({
  minimum: 1,
  maximum: MAX_CONCURRENCY,
  expected: `an integer from 1 to ${MAX_CONCURRENCY}`,
});

function Optional(schema: TSchema): TSchema {
  return Type.Optional(schema);
}

function Options(properties: Record<string, TSchema>, expected: string): TSchema {
  return Type.Object(properties, { additionalProperties: false, expected });
}

type Described<T> = { [K in keyof Required<T>]: TSchema };

const limitsProperties = {
  timeoutMs: Optional(PositiveNumber()),
  maxMemoryMb: Optional(Type.Number({ minimum: MIN_MEMORY_MB, expected: `a number of megabytes >= ${MIN_MEMORY_MB}` })),
  maxResultBytes: Optional(PositiveNumber()),
  abortGraceMs: Optional(PositiveNumber()),
} satisfies Described<ToolLimits>;

const LimitsSchema = Options(limitsProperties, 'an object of limits');

const ISOLATION = OneOf(['worker', 'process', 'sandbox']);

const ExecutionModeSchema = OneOf(['parallel', 'sequential']);

const permissionsProperties = {
  fsRead: Optional(
    Type.Array(Type.String({ minLength: 1, expected: 'a non-empty path' }), { expected: 'an array of paths' }),
  ),
  fsWrite: Optional(
    Type.Array(Type.String({ minLength: 1, expected: 'a non-empty path' }), { expected: 'an array of paths' }),
  ),
  // Folders of fsWrite that the sandbox's modules share on purpose (each has its own space otherwise).
  fsWriteShared: Optional(
    Type.Array(Type.String({ minLength: 1, expected: 'a non-empty path' }), { expected: 'an array of paths' }),
  ),
  // Network: on or off on the worker and process tiers, a 'host:port' list for the sandbox tier.
  net: Optional(
    Type.Union([Type.Boolean(), Type.Array(Type.String({ minLength: 1 }))], {
      expected: 'true, false or an array of "host:port"',
    }),
  ),
} satisfies Described<Permissions> & Record<string, TSchema>;

const workersProperties = {
  min: Optional(IntegerAtLeast(0)),
  max: Optional(IntegerAtLeast(1)),
  idleTimeoutMs: Optional(IntegerAtLeast(0)),
  loadTimeoutMs: Optional(IntegerAtLeast(1)),
} satisfies Described<WorkerOptions>;

const mcpPermissionsProperties = {
  fsRead: permissionsProperties.fsRead,
  fsWrite: permissionsProperties.fsWrite,
  net: Optional(
    Type.Array(Type.String({ minLength: 1, expected: 'a "host:port" string' }), {
      expected: 'an array of "host:port"',
    }),
  ),
} satisfies Described<McpServerPermissions>;

/**
 * One MCP server: the keys of both kinds in one object, so a misspelt key
 * is named with every known one; which keys go together (`command` or
 * `url`, and what only a started server has) is checked in
 * src/mcp-client/config.ts.
 */
const mcpServerProperties = {
  command: Optional(Type.String({ minLength: 1, expected: 'a non-empty string (the program to start)' })),
  args: Optional(Type.Array(Type.String({ expected: 'a string' }), { expected: 'an array of strings' })),
  env: Optional(
    Type.Record(Type.String(), Type.String({ expected: 'a string' }), { expected: 'an object of name → value' }),
  ),
  cwd: Optional(Type.String({ minLength: 1, expected: 'a non-empty path' })),
  isolation: Optional(OneOf(['process', 'sandbox'])),
  permissions: Optional(Options(mcpPermissionsProperties, 'an object with fsRead, fsWrite or net')),
  timeoutMs: Optional(PositiveNumber()),
  needsApproval: Optional(
    Type.Union([Type.Boolean(), FunctionOption()], {
      expected: 'true, false or a function (toolName, args) => boolean',
    }),
  ),
  url: Optional(Type.String({ minLength: 1, expected: 'a URL string' })),
  headers: Optional(
    Type.Record(Type.String(), Type.String({ expected: 'a string' }), { expected: 'an object of header name → value' }),
  ),
  // Any object with these methods (a class instance has others): the MCP SDK's OAuthClientProvider.
  authProvider: Optional(
    Type.Object(
      { tokens: FunctionOption(), clientInformation: FunctionOption(), saveTokens: FunctionOption() },
      {
        additionalProperties: true,
        expected: 'an OAuthClientProvider of the MCP SDK (an object with tokens, clientInformation, saveTokens, ...)',
      },
    ),
  ),
} satisfies Described<McpStdioServer> & Described<McpHttpServer>;

export const executorProperties = {
  // Required unless mcpServers is given (checked in createExecutor).
  tools: Optional(
    Type.Array(Type.Unknown(), { expected: 'an array of module paths, file URLs or defineTool() objects' }),
  ),
  toolExecution: Optional(ExecutionModeSchema),
  coerceArguments: Optional(Type.Boolean({ expected: 'true or false' })),
  beforeToolCall: Optional(FunctionOption()),
  afterToolCall: Optional(FunctionOption()),
  onElicit: Optional(FunctionOption()),
  host: Optional(Type.Record(Type.String(), FunctionOption(), { expected: 'an object of functions' })),
  limits: Optional(LimitsSchema),
  // The host's own limits per tool name, which may loosen `limits` (a tool's own limits only tighten).
  toolLimits: Optional(Type.Record(Type.String(), LimitsSchema, { expected: 'an object of tool name → limits' })),
  workers: Optional(Options(workersProperties, 'an object of worker counts and timeouts')),
  isolation: Optional(ISOLATION),
  permissions: Optional(Options(permissionsProperties, 'an object with fsRead, fsWrite, fsWriteShared or net')),
  env: Optional(
    Type.Union([Type.Array(Type.String()), Type.Record(Type.String(), Type.String())], {
      expected: 'a list of variable names or an object of name → value',
    }),
  ),
  // Any object with these two methods (a class instance has others): remoteRunner() of toolpool/bullmq is one.
  remote: Optional(
    Type.Object(
      { execute: FunctionOption(), close: FunctionOption() },
      {
        additionalProperties: true,
        expected: 'a remote runner (an object with execute and close methods, e.g. remoteRunner() of toolpool/bullmq)',
      },
    ),
  ),
  // Any object with these methods (a class instance has others): memoryLedger(), sqliteLedger(), redisLedger() or the user's own.
  ledger: Optional(
    Type.Object(
      { name: Type.String(), claim: FunctionOption(), end: FunctionOption(), release: FunctionOption() },
      {
        additionalProperties: true,
        expected:
          'a ledger (memoryLedger(), sqliteLedger(path), redisLedger() of toolpool/bullmq, or an object with name, claim, end and release)',
      },
    ),
  ),
  mcpServers: Optional(
    Type.Record(
      Type.String(),
      Options(mcpServerProperties, 'an MCP server: { command, args?, env?, ... } or { url, headers?, ... }'),
      {
        expected: 'an object of server name → { command, ... } or { url, ... }',
      },
    ),
  ),
} satisfies Described<ExecutorOptions>;

export const ExecutorOptionsSchema = Options(executorProperties, 'an object with a tools array');

/** MCP's tool hints; the title is bounded because clients show it and a module's worker reports it. */
const annotationsProperties = {
  title: Optional(Type.String({ maxLength: 256, expected: 'a string of at most 256 characters' })),
  readOnlyHint: Optional(Type.Boolean({ expected: 'a boolean' })),
  destructiveHint: Optional(Type.Boolean({ expected: 'a boolean' })),
  idempotentHint: Optional(Type.Boolean({ expected: 'a boolean' })),
  openWorldHint: Optional(Type.Boolean({ expected: 'a boolean' })),
} satisfies Described<ToolAnnotations>;

const AnnotationsSchema = Options(
  annotationsProperties,
  'an object of hints (title, readOnlyHint, destructiveHint, idempotentHint, openWorldHint)',
);

/** An object schema: MCP's outputSchema and structuredContent are objects. Its size is checked with the parameters'. */
const OutputSchemaSchema = Type.Unsafe({
  type: 'object',
  required: ['type'],
  properties: { type: { const: 'object', expected: '"object" (details are an object, as MCP\'s structuredContent)' } },
  expected: 'an object schema (Type.Object({...}) or { type: "object", ... })',
});

const toolProperties = {
  name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$', expected: '1-64 letters, digits, "_" or "-"' }),
  description: Type.String({ expected: 'a string' }),
  // Which schemas are accepted, and `execute` being there, is checked by definitionProblem (src/core/tool.ts), as in defineTool.
  parameters: Optional(Type.Unknown()),
  label: Optional(Type.String({ expected: 'a string' })),
  executionMode: Optional(ExecutionModeSchema),
  prepareArguments: Optional(FunctionField()),
  execute: Optional(Type.Unknown()),
  limits: Optional(LimitsSchema),
  isolation: Optional(ISOLATION),
  // Calls of this tool that may run at once in one worker (I/O-bound tools).
  concurrency: Optional(CONCURRENCY),
  needsApproval: Optional(
    Type.Union([Type.Boolean(), FunctionField()], { expected: 'true, false or a function (args) => boolean' }),
  ),
  annotations: Optional(AnnotationsSchema),
  outputSchema: Optional(OutputSchemaSchema),
} satisfies Described<ToolDefinition> & Record<string, TSchema>;

export const ToolDefinitionSchema = Options(toolProperties, 'an object');

/**
 * A module tool's definition as its worker reports it. The worker runs the
 * tool's code, so the host checks this again before it uses any of it: the
 * sizes are bounded because the host compiles the schema and shows the
 * texts to a model.
 */
const toolInfoProperties = {
  name: toolProperties.name,
  description: Type.String({ maxLength: 64 * 1024, expected: 'a string of at most 64 KiB' }),
  parameters: Type.Unsafe({ type: 'object', expected: 'a JSON Schema object' }),
  schemaVendor: Optional(Type.String({ maxLength: 64, expected: 'a string of at most 64 characters' })),
  label: Optional(Type.String({ maxLength: 256, expected: 'a string of at most 256 characters' })),
  executionMode: ExecutionModeSchema,
  limits: LimitsSchema,
  isolation: Optional(ISOLATION),
  concurrency: Optional(CONCURRENCY),
  hasPrepare: Type.Boolean({ expected: 'a boolean' }),
  // A tool without execute is refused where it is described; a worker that says otherwise is not believed.
  hasExecute: Type.Literal(true, { expected: 'true' }),
  needsApproval: Optional(
    Type.Union([Type.Literal('never'), Type.Literal('always'), Type.Literal('function')], {
      expected: '"never", "always" or "function"',
    }),
  ),
  annotations: Optional(AnnotationsSchema),
  outputSchema: Optional(OutputSchemaSchema),
} satisfies Described<ToolInfo>;

export const ToolInfoSchema = Options(toolInfoProperties, 'a tool definition');
