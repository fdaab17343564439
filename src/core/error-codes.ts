/**
 * toolpool's error codes, in one table, and the error classes that carry
 * them. Match on `code` (or a `tool_end` event's `errorCode`), never on the
 * text: the texts are written for a person and a model and may change; the
 * codes are stable. docs/errors.md holds this table (a test keeps the two
 * equal): the comment on each code is its row there, "meaning. What to do."
 *
 * `TOOLPOOL_ERR_…` codes are thrown (on a `ToolpoolError`); the short codes
 * (`TIMEOUT`, `NOT_FOUND`, …) are a failed call's `errorCode` on `tool_end`
 * and on its ToolResultMessage: a failed call is a result, never a throw.
 */
export const ERROR_CODES = {
  // Thrown.
  /** An option is invalid (createExecutor, executeBatch, an Agent, a remote queue, env, permissions, an MCP server's config); thrown as a TypeError. Fix the option the message names. */
  TOOLPOOL_ERR_INVALID_OPTION: 'thrown',
  /** The platform cannot enforce what an option asks for (no sandbox, permissions this Node line lacks). Run where it is supported, or ask for less. */
  TOOLPOOL_ERR_UNSUPPORTED: 'thrown',
  /** A tool definition or its schema is invalid (a tool file, defineTool, an MCP server's tool). Fix the definition the message names. */
  TOOLPOOL_ERR_INVALID_TOOL: 'thrown',
  /** Two tools have the same name. Rename one, or load it once. */
  TOOLPOOL_ERR_DUPLICATE_TOOL: 'thrown',
  /** A tool module or folder could not be found or loaded (it threw, exited or timed out at import). Fix the path or the module. */
  TOOLPOOL_ERR_MODULE_LOAD: 'thrown',
  /** A tool's own code failed outside a call (its prepareArguments, needsApproval or validation, called directly). Read the message; it is the tool's. */
  TOOLPOOL_ERR_TOOL_FAILED: 'thrown',
  /** A worker or child broke toolpool's protocol and was retired. Treat the tool as faulty or hostile. */
  TOOLPOOL_ERR_PROTOCOL: 'thrown',
  /** The operation was aborted or timed out before it finished. Retry with a longer limit, or not at all. */
  TOOLPOOL_ERR_ABORTED: 'thrown',
  /** The executor, pool or connection was closed. Create a new one. */
  TOOLPOOL_ERR_CLOSED: 'thrown',
  /** The sandbox (bubblewrap) cannot run here, or cannot reach a path it needs. Install or allow bwrap, or use another tier. */
  TOOLPOOL_ERR_SANDBOX_UNAVAILABLE: 'thrown',
  /** An MCP server could not be started or used (command not found, SDK missing, it failed at start). Fix the server's config. */
  TOOLPOOL_ERR_MCP_SERVER: 'thrown',
  /** The Agent cannot do this now (a run is active, approvals are pending, nothing to resume). Wait for the run, or decide the pending calls. */
  TOOLPOOL_ERR_AGENT_STATE: 'thrown',
  /** Approval decisions are malformed or name calls that are not pending. Pass { approved, rejected } with the pending call ids. */
  TOOLPOOL_ERR_INVALID_DECISIONS: 'thrown',
  /** A snapshot is malformed, of another version, unsigned or tampered with. Do not resume from it. */
  TOOLPOOL_ERR_INVALID_SNAPSHOT: 'thrown',
  /** A model's output or setup is invalid (a scripted turn, a missing API key). Fix the script or the model's options. */
  TOOLPOOL_ERR_MODEL: 'thrown',
  /** A call ledger could not claim or record a call (unreachable, closed, a record unreadable). Check the ledger's store; nothing ran without a record. */
  TOOLPOOL_ERR_LEDGER: 'thrown',
  /** toolpool was loaded with require(); it is an ES module package. Use import, or await import() from CommonJS. */
  TOOLPOOL_ERR_REQUIRE_ESM: 'thrown',
  /** A tool's `ctx.elicit` got no answer: no one can answer (no `onElicit`, a client without elicitation), the request or the answer is invalid, a question is already open, or the call ended. Pass `onElicit`, or fix the request the message names. */
  TOOLPOOL_ERR_ELICITATION: 'thrown',

  // A failed call's errorCode.
  /** No tool of that name. The model should call a listed tool. */
  NOT_FOUND: 'result',
  /** The arguments are not valid JSON, not an object, too deep, or fail the tool's schema. The model should call again with fixed arguments. */
  INVALID_ARGUMENTS: 'result',
  /** The tool's prepareArguments threw or returned a non-object. Fix the tool, or the arguments it cannot prepare. */
  PREPARE_FAILED: 'result',
  /** Another call in the batch has the same id. Give each call its own id. */
  DUPLICATE_CALL_ID: 'result',
  /** The tool needs a person's approval and the call has none (or one for another call). Pass approvals, or run it through an Agent. */
  NOT_APPROVED: 'result',
  /** A person rejected the call. Do not retry it as is. */
  REJECTED: 'result',
  /** beforeToolCall blocked the call. Your hook decided; see its reason. */
  BLOCKED: 'result',
  /** A hook stopped the run before the call started. Your hook decided; see its reason. */
  STOPPED: 'result',
  /** A hook (beforeToolCall, afterToolCall, needsApproval) threw. Fix the hook. */
  HOOK_FAILED: 'result',
  /** The call was aborted (its signal fired) before or while it ran. Retry if you still want it. */
  ABORTED: 'result',
  /** The tool ran past timeoutMs and was stopped. Raise timeoutMs, or make the tool faster. */
  TIMEOUT: 'result',
  /** The tool reached maxMemoryMb and was stopped. Raise maxMemoryMb, or make the tool use less. */
  MEMORY_LIMIT: 'result',
  /** The tool's result or update is over maxResultBytes. Raise the limit, or return less. */
  RESULT_TOO_LARGE: 'result',
  /** The tool returned something that is not a valid result (not cloneable, not { content }, details that break its outputSchema). Fix the tool. */
  INVALID_RESULT: 'result',
  /** The tool threw (or rejected) its own error; the text is the tool's. The tool decides; toolpool did nothing wrong. */
  THREW: 'result',
  /** The tool's worker, process or server crashed, exited or broke the protocol. Fix the tool; the call may be retried. */
  CRASHED: 'result',
  /** The executor, pool or connection closed before the call could run. Use a live executor. */
  CLOSED: 'result',
  /** The call failed in a runner that gave no finer code (an MCP server's or a remote worker's error result). Read the text. */
  FAILED: 'result',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
/** The codes a ToolpoolError carries. */
export type ToolpoolErrorCode = { [K in ErrorCode]: (typeof ERROR_CODES)[K] extends 'thrown' ? K : never }[ErrorCode];
/** The codes of a failed call (`tool_end`'s `errorCode`). */
export type ToolErrorCode = Exclude<ErrorCode, ToolpoolErrorCode>;

/** What a worker or child may say about its own call; any other claim (or none) is THREW. */
const REPORTABLE: ReadonlySet<unknown> = new Set<ToolErrorCode>([
  'THREW',
  'RESULT_TOO_LARGE',
  'INVALID_RESULT',
  'TIMEOUT',
  'ABORTED',
  'MEMORY_LIMIT',
  'CRASHED',
]);

/**
 * The code of a failure a tool's side reported (a worker's result message, a
 * child's outcome): untrusted, so only a code about the call itself is kept.
 * A tool cannot make its own failure look like the host's (NOT_APPROVED,
 * BLOCKED, CLOSED …); whatever it claims otherwise is THREW.
 */
export function reportedCode(claimed: unknown): ToolErrorCode {
  return REPORTABLE.has(claimed) ? (claimed as ToolErrorCode) : 'THREW';
}

/** The code of a stop: a timeout, or an abort (before or while it ran). */
export function stopCode(reason: 'timeout' | 'aborted'): ToolErrorCode {
  return reason === 'timeout' ? 'TIMEOUT' : 'ABORTED';
}

/**
 * The brand: a registry symbol, the same in every realm (a vm context, a
 * second copy of toolpool), set on both classes' prototypes. It does not
 * survive a structured clone (Node keeps only an Error's name, message and
 * stack), so isToolpoolError also accepts an error whose `code` is one of
 * the table's thrown codes.
 */
const BRAND = Symbol.for('toolpool.error');

const hasOwn = Object.prototype.hasOwnProperty;

/** True for an error toolpool threw: from this copy of toolpool, another copy or realm, or a copy whose brand was lost on the way (a cloned error with a toolpool `code`). */
export function isToolpoolError(value: unknown): value is ToolpoolError | ToolpoolTypeError {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  try {
    if ((value as { [BRAND]?: unknown })[BRAND] === true) return true;
    const code = (value as { code?: unknown }).code;
    return typeof code === 'string' && hasOwn.call(ERROR_CODES, code) && ERROR_CODES[code as ErrorCode] === 'thrown';
  } catch {
    // A Proxy or a getter that throws is not ours.
    return false;
  }
}

/** An error toolpool throws. `code` is stable; match on it, not on `message`. */
export class ToolpoolError extends Error {
  declare readonly code: ToolpoolErrorCode;
  constructor(code: ToolpoolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, 'code', { value: code, enumerable: true, writable: false, configurable: true });
  }
  static override [Symbol.hasInstance](value: unknown): boolean {
    // Across copies and realms: any branded error is a ToolpoolError (and a ToolpoolTypeError is also one).
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class instanceof was asked about (ToolpoolError or a subclass).
    return this === ToolpoolError ? isToolpoolError(value) : Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

/**
 * A bad option or argument: a TypeError (so `instanceof TypeError` holds, as
 * before) that carries a code and the brand like a ToolpoolError, and is
 * `instanceof ToolpoolError` too.
 */
export class ToolpoolTypeError extends TypeError {
  declare readonly code: ToolpoolErrorCode;
  constructor(code: ToolpoolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    Object.defineProperty(this, 'code', { value: code, enumerable: true, writable: false, configurable: true });
  }
}

for (const type of [ToolpoolError, ToolpoolTypeError]) {
  Object.defineProperty(type.prototype, BRAND, { value: true });
  Object.defineProperty(type.prototype, 'name', { value: type.name, writable: true, configurable: true });
}
