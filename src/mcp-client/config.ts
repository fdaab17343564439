import { MCP_NAME_CHARS, McpErrors, errorMessage } from '../core/errors.ts';
import { checkIsolation } from '../isolation/tiers.ts';
import { parseNetAllowlist, type NetTarget } from '../isolation/sandbox/net-allowlist.ts';
import type {
  McpApproval,
  McpHttpServer,
  McpOAuthProvider,
  McpServerConfig,
  McpStdioServer,
} from '../core/mcp-config.ts';
import { ToolpoolTypeError } from '../core/error-codes.ts';

/** A server toolpool starts, its configuration checked, with its isolation filled in. */
export interface StdioPlan {
  kind: 'stdio';
  name: string;
  config: McpStdioServer;
  isolation: 'process' | 'sandbox';
  /** `permissions.net`, parsed (sandbox only). */
  netTargets: NetTarget[];
}

export interface HttpPlan {
  kind: 'http';
  name: string;
  url: URL;
  headers: Readonly<Record<string, string>>;
  /** The SDK's OAuthClientProvider, for a server behind OAuth. */
  authProvider?: McpOAuthProvider;
}

export type ServerPlan = (StdioPlan | HttpPlan) & { timeoutMs?: number; needsApproval?: McpApproval };

const SERVER_NAME = new RegExp(`^[a-zA-Z0-9_-]{1,${MCP_NAME_CHARS}}$`);
/** Keys only a server toolpool starts has. */
const STDIO_ONLY = ['args', 'env', 'cwd', 'isolation', 'permissions'] as const;

/**
 * What the options schema cannot say: a name usable in tool names, a
 * `command` or a `url` (and not both), the keys that go with each, and
 * permissions the server's tier can enforce. Throws a TypeError naming the
 * server.
 */
export function checkServerConfigs(servers: Readonly<Record<string, McpServerConfig>>): ServerPlan[] {
  return Object.entries(servers).map(([name, config]) => checkServer(name, config));
}

function checkServer(name: string, config: McpServerConfig): ServerPlan {
  if (!SERVER_NAME.test(name))
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.badServerName(name));
  const { command } = config as Partial<McpStdioServer>;
  const { url } = config as Partial<McpHttpServer>;
  if ((command === undefined) === (url === undefined))
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.commandOrUrl(name, command !== undefined));
  const shared = {
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(config.needsApproval !== undefined ? { needsApproval: config.needsApproval } : {}),
  };
  if (url !== undefined)
    return {
      kind: 'http',
      name,
      url: checkUrl(name, config as McpHttpServer),
      headers: (config as McpHttpServer).headers ?? {},
      ...((config as McpHttpServer).authProvider ? { authProvider: (config as McpHttpServer).authProvider } : {}),
      ...shared,
    };
  return { ...checkStdio(name, config as McpStdioServer), ...shared };
}

function checkUrl(name: string, config: McpHttpServer): URL {
  const misplaced = STDIO_ONLY.filter((key) => Object.hasOwn(config, key));
  if (misplaced.length > 0)
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.keysNeedCommand(name, misplaced));
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.badUrl(name, config.url));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.badUrl(name, config.url));
  return url;
}

function checkStdio(name: string, config: McpStdioServer): StdioPlan {
  const isolation = config.isolation ?? 'sandbox';
  const { permissions } = config;
  if (isolation === 'process') {
    if (permissions !== undefined)
      throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.permissionsNeedSandbox(name));
    return { kind: 'stdio', name, config, isolation, netTargets: [] };
  }
  try {
    // The sandbox tier's own checks: a well-formed net list, no write access to toolpool's caches, paths nobody can use under a root host.
    // A server's fsWrite folders are bound as they are (no space per server yet), so all must let its uid in.
    if (permissions)
      checkIsolation('sandbox', {
        ...permissions,
        ...(permissions.fsWrite ? { fsWriteShared: permissions.fsWrite } : {}),
      });
    return { kind: 'stdio', name, config, isolation, netTargets: parseNetAllowlist(permissions?.net ?? []) };
  } catch (error) {
    throw new ToolpoolTypeError('TOOLPOOL_ERR_INVALID_OPTION', McpErrors.badPermissions(name, errorMessage(error)));
  }
}
