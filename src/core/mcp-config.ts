// The shape of `createExecutor({ mcpServers })`, as types only: the options
// (src/core/options.ts) and the MCP client below both use them, and importing
// them loads nothing of the MCP SDK.

/**
 * Whether a call of a server's tool needs a person's approval: `true` for
 * every call, or a function of the server's own tool name and the
 * arguments as validated and coerced on the host.
 */
export type McpApproval =
  | boolean
  | { check(toolName: string, args: Record<string, unknown>): boolean | Promise<boolean> }['check'];

/** What a server toolpool starts may reach when it runs in the sandbox tier. */
export interface McpServerPermissions {
  /** Files and folders it may read (besides the command and its libraries): its script and its node_modules belong here. */
  fsRead?: readonly string[];
  /** Files and folders it may write. */
  fsWrite?: readonly string[];
  /** `'host:port'` entries it may connect to; nothing else of the network is there. */
  net?: readonly string[];
}

/** An MCP server toolpool starts and speaks to over its stdin and stdout. */
export interface McpStdioServer {
  /** The program: a path, or a name looked up on this process's PATH. */
  command: string;
  args?: readonly string[];
  /**
   * The server's whole environment (default: empty; nothing of this
   * process's, not even PATH). A process-tier server in bubblewrap's PID
   * namespace also gets PWD, its working folder.
   */
  env?: Readonly<Record<string, string>>;
  /** Its working folder (default: this process's). */
  cwd?: string;
  /**
   * `'sandbox'` (the default): bubblewrap, with only the command, its
   * libraries and `permissions` visible; `'process'`: a process of its own
   * (its own process group, and PID namespace where bubblewrap works) with
   * the rights of this process's user.
   */
  isolation?: 'process' | 'sandbox';
  /** What a sandboxed server may read, write and connect to. */
  permissions?: McpServerPermissions;
  /** Each call's time limit (default: the executor's `limits.timeoutMs`). */
  timeoutMs?: number;
  needsApproval?: McpApproval;
}

/** An MCP server reached over Streamable HTTP. */
export interface McpHttpServer {
  /** Its endpoint, e.g. `https://example.com/mcp`. */
  url: string;
  /** Sent with every request (an `Authorization` header, for instance). */
  headers?: Readonly<Record<string, string>>;
  /**
   * OAuth for a server that needs it: the MCP SDK's own `OAuthClientProvider`
   * (from `@modelcontextprotocol/client`; the 1.x one from
   * `@modelcontextprotocol/sdk/client/auth.js` has the same shape), handed to its
   * Streamable HTTP transport, which discovers the server's authorization
   * server, registers, gets and refreshes tokens through it.
   */
  authProvider?: McpOAuthProvider;
  /** Each call's time limit (default: the executor's `limits.timeoutMs`). */
  timeoutMs?: number;
  needsApproval?: McpApproval;
}

/**
 * The MCP SDK's `OAuthClientProvider`, by its shape: any of the SDK's
 * providers (or your own implementation of its interface) fits. Written out
 * here so toolpool's public types do not reach into the SDK's;
 * the SDK's transport calls its other optional methods as it documents.
 */
export interface McpOAuthProvider {
  readonly redirectUrl: string | URL | undefined;
  readonly clientMetadata: object;
  clientInformation(): unknown;
  tokens(): unknown;
  saveTokens(tokens: never): void | Promise<void>;
  redirectToAuthorization(authorizationUrl: URL): void | Promise<void>;
  saveCodeVerifier(codeVerifier: string): void | Promise<void>;
  codeVerifier(): string | Promise<string>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;
