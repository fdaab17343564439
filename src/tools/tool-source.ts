import type { RegisteredTool } from './registered-tool.ts';

/**
 * Tools whose list can change while the executor runs (the tools of MCP
 * servers): the executor reads `tools` again whenever `version` moved, so
 * `definitions` and the next batch see the list as it is now.
 */
export interface ToolSource {
  /** The tools now, by executor name. */
  readonly tools: ReadonlyMap<string, RegisteredTool>;
  /** Grows with every change of `tools`. */
  readonly version: number;
  /** A change already announced and still being applied: a batch waits for it; undefined when there is none. */
  settled(): Promise<void> | undefined;
  /** Calls `listener` after each change of `tools` (once the new list is in place); returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}
