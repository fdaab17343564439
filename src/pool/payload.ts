import { deserialize, serialize } from 'node:v8';
import { ToolErrors, errorMessage } from '../errors.ts';
import { problemWithResult } from '../tool-result.ts';
import type { ToolResult } from '../tool.ts';

export type Encoded = { ok: true; bytes: Uint8Array } | { ok: false; error: string };

/**
 * Serializes a result or an update on the sending side. Doing it here, not
 * in postMessage, proves the value can cross, measures it against
 * `maxResultBytes` before anything is sent, and turns a non-cloneable value
 * into an error the tool's call can report (an uncaught DataCloneError in a
 * worker would otherwise leave the call hanging).
 */
export function encodeToolResult(value: unknown, what: 'result' | 'update', maxBytes: number): Encoded {
  const problem = problemWithResult(value);
  if (problem) return { ok: false, error: ToolErrors.invalidResult(problem) };
  let bytes: Uint8Array;
  try {
    bytes = serialize(value);
  } catch (error) {
    return { ok: false, error: ToolErrors.notCloneable(what, errorMessage(error)) };
  }
  if (bytes.byteLength > maxBytes) return { ok: false, error: ToolErrors.resultTooLarge(what, bytes.byteLength, maxBytes) };
  return { ok: true, bytes };
}

/** The receiving side. Deserialization defines own properties, so a `__proto__` key stays data. */
export function decodeToolResult(bytes: Uint8Array): ToolResult {
  return deserialize(bytes) as ToolResult;
}
