import type { Executor } from '../../index.ts';

// What the MCP server and its helpers share: the server (server.ts) builds
// on the helpers (tool-list.ts, call-tool.ts, ...), and both use these, so
// they live below both.

/**
 * What the MCP server needs of an executor: its tools, what it knows about
 * them, and `executeBatch`; with `on`, a change of its tools reaches the
 * clients as `notifications/tools/list_changed`.
 */
export type McpExecutor = Pick<Executor, 'definitions' | 'labels' | 'metadata' | 'executeBatch'> &
  Partial<Pick<Executor, 'on'>>;

export interface McpServerOptions {
  /** The server name clients show (default "toolpool"). */
  name?: string;
  /** The server version clients show (default: toolpool's version). */
  version?: string;
  /**
   * How long a call of a tool with `needsApproval` waits for the person's
   * answer to the client's approval question (MCP elicitation) before it is
   * refused (default 300000, five minutes).
   */
  approvalTimeoutMs?: number;
}
