import { ConfigErrors } from './errors.ts';
import type { ElicitRequest, ElicitResult } from './elicitation.ts';
import {
  parametersProblem,
  type JsonSchema,
  type ToolArgs,
  type ToolInput,
  type ToolParameters,
} from './tool-parameters.ts';
import { ToolpoolTypeError, type ToolErrorCode } from './error-codes.ts';

/** A text part of a tool result or a message. */
export interface TextContent {
  type: 'text';
  text: string;
}

/** An image part: base64 data plus its MIME type (e.g. `image/png`). */
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

/** An audio part: base64 data plus its MIME type (e.g. `audio/wav`). */
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
}

/** A resource's contents as text (MCP's `TextResourceContents`). */
export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
}

/** A resource's contents as base64 bytes (MCP's `BlobResourceContents`). */
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
}

/** A resource embedded in the result, its contents text or base64 bytes (MCP's `EmbeddedResource`). */
export interface ResourceContent {
  type: 'resource';
  resource: TextResourceContents | BlobResourceContents;
}

/** A link to a resource the reader may fetch (MCP's `ResourceLink`); its contents are not in the result. */
export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/**
 * A part of a tool result or a message: MCP's content types, field for
 * field. Models see text and images everywhere; what each model adapter
 * does with audio and resources is in its documentation.
 */
export type Content = TextContent | ImageContent | AudioContent | ResourceContent | ResourceLinkContent;

/**
 * What `execute` returns. `content` is what the model reads next turn;
 * `details` is for logs and UIs and never reaches the model; `terminate`
 * asks to stop after this batch.
 */
export interface ToolResult<TDetails = unknown> {
  content: Content[];
  details?: TDetails;
  terminate?: boolean;
}

export type ExecutionMode = 'parallel' | 'sequential';
/**
 * Where a module tool runs. Every tier gives fault isolation (crashes, hangs,
 * heap, CPU time, bad results become error results). Only processes are walls
 * against code written to attack the host: `'worker'` threads share the
 * host's process (its memory, its main thread through a nested worker's
 * inspector, its descriptors, and without `permissions` its files);
 * `'process'` is a wall only with `permissions` (Node's permission model:
 * it follows links that already exist in a granted root; no seccomp filter);
 * `'sandbox'` (bubblewrap) is one (it shares the host's kernel: its seccomp filter refuses only keyrings).
 * Tools you did not write: `'sandbox'`, or `'process'` with `permissions`.
 */
export type Isolation = 'worker' | 'process' | 'sandbox';

/** Limits for one call; any field left out falls back to the executor's. */
export interface ToolLimits {
  /** Wall time from the moment the tool starts running. */
  timeoutMs?: number;
  /** The worker's JS heap (process tier: the whole child process). */
  maxMemoryMb?: number;
  /** Largest serialized result or update; measured before it crosses threads. */
  maxResultBytes?: number;
  /** How long a tool gets to honour `ctx.signal` before it is killed. */
  abortGraceMs?: number;
}

/**
 * Functions the host grants to tools (`createExecutor({ host })`). Inside a
 * tool they are called as `ctx.host.name(...)` and always return a promise.
 */
export type HostFunctions = Record<string, (...args: never[]) => unknown>;

export interface ToolContext {
  callId: string;
  /**
   * The run this call belongs to (`executeBatch(calls, { runId })`, an
   * Agent's run id), or undefined. With `callId` it names the call across
   * retries, restarts and hosts: pass both downstream as an idempotency key
   * (`${runId}:${callId}`) to make a side effect happen exactly once.
   */
  runId?: string | undefined;
  /** Fires when the call is aborted or times out; stop work promptly. */
  signal: AbortSignal;
  /** Emit a partial result as a `tool_update` event; dropped once the call settled. */
  onUpdate: (partial: ToolResult) => void;
  /** Host capabilities granted by `createExecutor({ host })`. */
  host: Record<string, (...args: unknown[]) => Promise<unknown>>;
  /**
   * Asks the person a question mid-call (MCP elicitation, form mode): one
   * at a time per call. Answered by `createExecutor({ onElicit })` (or an
   * Agent's, or the MCP client behind `toolpool serve`); the content of an
   * `accept` is checked against `requestedSchema` before the tool sees it.
   * Rejects with a `ToolpoolError` (`TOOLPOOL_ERR_ELICITATION`) when no one
   * can answer or the request is invalid, and when the call is stopped.
   */
  elicit(request: ElicitRequest): Promise<ElicitResult>;
}

export interface ToolDefinition<TParams extends ToolParameters = ToolParameters, TDetails = unknown> {
  name: string;
  description: string;
  /**
   * The arguments' schema: TypeBox (`@sinclair/typebox` 0.32-0.34 or
   * `typebox` 1.x), a Standard Schema that gives a JSON Schema (Zod 4,
   * ArkType 2, Valibot through `toStandardJsonSchema`), or a JSON Schema
   * object. The model sees its JSON Schema, which validates and coerces the
   * arguments; a Standard Schema's own validation (refinements, transforms,
   * defaults) then runs before `execute`, where the tool's code runs.
   */
  parameters: TParams;
  /** UI metadata only; never changes execution. */
  label?: string;
  executionMode?: ExecutionMode;
  /** Rewrites the raw arguments before validation. */
  prepareArguments?: (raw: Record<string, unknown>) => Record<string, unknown>;
  /**
   * Runs the tool with validated, coerced arguments, typed from the schema
   * (a Standard Schema's output type, TypeBox's `Static`). Throw to fail.
   */
  // Method syntax on purpose: a concrete tool must stay assignable to `Tool` (bivariant args).
  execute(args: ToolArgs<TParams>, ctx: ToolContext): Promise<ToolResult<TDetails>> | ToolResult<TDetails>;
  limits?: ToolLimits;
  isolation?: Isolation;
  /**
   * How many calls of this tool may run at once in one worker (default 1,
   * at most 256). For I/O-bound tools (waiting on HTTP, a database, host
   * functions): the calls share the worker's event loop and heap. A hard
   * stop of one call (a timeout or abort it ignores, its memory limit) kills
   * the worker, so the calls sharing it end with an error saying so; calls
   * sent to it that had not started go to another worker. Keep 1 for a tool
   * that is not safe to share. Inline tools ignore it: they all run on the
   * main thread.
   */
  concurrency?: number;
  /**
   * A person must approve each call before it runs: `true`, or a function
   * of the arguments as the JSON Schema validated and coerced them (before
   * a Standard Schema's own transforms; for a module tool it runs in a
   * worker, like `prepareArguments`). An `Agent` pauses the run instead of
   * running such a batch; see `agent.resume()`.
   */
  needsApproval?: boolean | ApprovalCheck<ToolInput<TParams>>;
  /** Hints for clients that list the tool (MCP tool annotations); UI metadata, they never change execution. */
  annotations?: ToolAnnotations;
  /**
   * The shape of the result's `details`, as a TypeBox or JSON Schema object
   * schema. The host checks every result's details against it (a mismatch
   * is an error result saying so), and MCP clients get it as the tool's
   * `outputSchema`, with the details as `structuredContent`.
   */
  outputSchema?: OutputSchema;
}

/**
 * MCP's tool annotations: hints a client may show or act on (ask before a
 * destructive call, retry an idempotent one). Hints only: a client must not
 * trust them for safety, and toolpool does not enforce them.
 */
export interface ToolAnnotations {
  /** A human-readable title (MCP shows the tool's `label` first when both are set). */
  title?: string;
  /** The tool does not change its environment. */
  readOnlyHint?: boolean;
  /** The tool may delete or overwrite (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no further effect. */
  idempotentHint?: boolean;
  /** The tool reaches an open world (the web, other people's systems), not only a closed one. */
  openWorldHint?: boolean;
}

/**
 * A JSON Schema of an object, or a TypeBox `Type.Object(...)` (which is
 * one): `details` must be an object for MCP's `structuredContent`.
 */
export type OutputSchema = { type: 'object'; [keyword: string]: unknown };

/**
 * `(args) => boolean | Promise<boolean>`, declared as a method so that a
 * concrete tool stays assignable to `Tool` (bivariant args, as `execute`).
 */
export type ApprovalCheck<TArgs> = { check(args: TArgs): boolean | Promise<boolean> }['check'];

/** How a tool asks for approval, as plain data: never, for every call, or when its `needsApproval` function says so. */
export type ApprovalPolicy = 'never' | 'always' | 'function';

/** The brand that marks an object made by `defineTool`; global so copies of toolpool agree. */
export const TOOL_BRAND: unique symbol = Symbol.for('toolpool.tool') as never;

export type Tool<TParams extends ToolParameters = ToolParameters, TDetails = unknown> = ToolDefinition<
  TParams,
  TDetails
> & {
  readonly [TOOL_BRAND]: true;
};

/**
 * Declares a tool. The type of `args` in `execute` is derived from the
 * `parameters` schema, so the schema shown to the model and the type the
 * code uses cannot drift apart. Throws a TypeError when `parameters` is not
 * a schema toolpool understands or `execute` is missing.
 */
export function defineTool<TParams extends ToolParameters, TDetails = unknown>(
  definition: ToolDefinition<TParams, TDetails>,
): Tool<TParams, TDetails> {
  const problem = definitionProblem(definition);
  if (problem)
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_TOOL',
      ConfigErrors.badDefinition((definition as { name?: unknown } | undefined)?.name, problem),
    );
  return Object.assign({}, definition, { [TOOL_BRAND]: true as const });
}

/** What defineTool refuses at once: the rest of a definition is checked when the tool is registered. */
export function definitionProblem(definition: unknown): string | undefined {
  if (typeof definition !== 'object' || definition === null) return 'a tool definition must be an object';
  const { parameters, execute } = definition as Partial<ToolDefinition>;
  return parametersProblem(parameters) ?? (typeof execute === 'function' ? undefined : ConfigErrors.noExecute());
}

export function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_BRAND] === true;
}

/** What the model sees of a tool; `parameters` is plain JSON Schema, whatever the tool was written with. */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A call the model asked for. `arguments` may be a JSON string, as some providers send it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

/** A finished call, in the shape the transcript and the model adapters use. */
export interface ToolResultMessage<TDetails = unknown> {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: Content[];
  details: TDetails | undefined;
  isError: boolean;
  /** Why the call failed, when `isError` is true (as on `tool_end`); absent on a success. */
  errorCode?: ToolErrorCode;
  timestamp: number;
}
