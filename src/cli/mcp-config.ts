import { readFile } from 'node:fs/promises';
import { CliErrors } from '../core/errors.ts';
import type { McpServerConfig } from '../core/mcp-config.ts';
import { oneLineMessage, runError } from './errors.ts';

/** The transports a config's `type` may name (VS Code writes one); toolpool knows from command or url which it is. */
const KNOWN_TYPES = new Set(['stdio', 'http', 'streamable-http', 'streamableHttp']);

/**
 * `--mcp-config FILE`: the `{ "mcpServers": { NAME: { command, args, env } } }`
 * file Claude Desktop, Cursor and VS Code use, with toolpool's `isolation`
 * and `permissions` keys, as `createExecutor({ mcpServers })`. The keys of
 * each server are checked by createExecutor (a misspelt one is named with
 * the known ones); only a `type` key is read (and dropped) here.
 */
export async function readMcpConfig(file: string): Promise<Record<string, McpServerConfig>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw runError(CliErrors.mcpConfigUnreadable(file, oneLineMessage(error)), error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw runError(CliErrors.mcpConfigNotJson(file, oneLineMessage(error)), error);
  }
  const servers = (parsed as { mcpServers?: unknown } | null)?.mcpServers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw runError(CliErrors.mcpConfigShape(file));
  const configs: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(servers as Record<string, unknown>)) {
    if (typeof server !== 'object' || server === null || Array.isArray(server))
      throw runError(CliErrors.mcpConfigShape(file));
    const { type, ...config } = server as Record<string, unknown>;
    if (type !== undefined && !KNOWN_TYPES.has(String(type)))
      throw runError(CliErrors.mcpConfigType(file, name, String(type)));
    configs[name] = config as unknown as McpServerConfig;
  }
  return configs;
}

/** An executor's error about an MCP server, told as one about the config file it came from. */
export function inConfigTerms(message: string, file: string | undefined): string {
  if (file === undefined || !/\bmcpServers\b|\bMCP server\b/.test(message)) return message;
  return `--mcp-config ${file}: ${message.replace(/^createExecutor: /, '')}`;
}
