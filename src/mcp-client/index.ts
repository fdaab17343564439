// The MCP client: third-party MCP servers as a source of executor tools.
// Loaded only when createExecutor is given mcpServers (it needs the SDK).
import { ConfigErrors } from '../core/errors.ts';
import type { RegisteredTool } from '../tools/registered-tool.ts';
import type { ToolSource } from '../tools/tool-source.ts';
import { checkServerConfigs } from './config.ts';
import { ServerSupervisor, type SupervisorOptions } from './supervisor.ts';
import type { McpServerConfig } from '../core/mcp-config.ts';
import { ToolpoolError } from '../core/error-codes.ts';

export type McpStartOptions = Omit<SupervisorOptions, 'onToolsChanged'>;

/**
 * Starts every server (at once) and resolves when each has listed its
 * tools. When one cannot start, the others are stopped again and this
 * rejects with that server's error.
 */
export async function startMcpServers(
  servers: Readonly<Record<string, McpServerConfig>>,
  options: McpStartOptions,
): Promise<McpTools> {
  const plans = checkServerConfigs(servers);
  const tools = new McpTools();
  const supervisors = plans.map(
    (plan) => new ServerSupervisor(plan, { ...options, onToolsChanged: () => tools.changed() }),
  );
  tools.add(supervisors);
  const started = await Promise.allSettled(supervisors.map((supervisor) => supervisor.start()));
  const failed = started.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) {
    await tools.close();
    throw failed.reason;
  }
  tools.checkNames();
  return tools;
}

/** The tools of every configured server, as one source for the executor. */
export class McpTools implements ToolSource {
  #supervisors: ServerSupervisor[] = [];
  #version = 0;
  #merged: { version: number; tools: ReadonlyMap<string, RegisteredTool> } | undefined;
  readonly #warned = new Set<string>();

  add(supervisors: ServerSupervisor[]): void {
    this.#supervisors = supervisors;
  }

  readonly #listeners = new Set<() => void>();

  changed(): void {
    this.#version++;
    for (const listener of [...this.#listeners]) listener();
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  get version(): number {
    return this.#version;
  }

  get tools(): ReadonlyMap<string, RegisteredTool> {
    if (this.#merged?.version !== this.#version) this.#merged = { version: this.#version, tools: this.#merge() };
    return this.#merged.tools;
  }

  settled(): Promise<void> | undefined {
    const pending = this.#supervisors.flatMap((supervisor) => supervisor.refreshed() ?? []);
    if (pending.length === 0) return undefined;
    return Promise.all(pending).then(() => this.settled());
  }

  async close(): Promise<void> {
    await Promise.all(this.#supervisors.map((supervisor) => supervisor.close()));
  }

  /** At start, two servers giving one executor name is a configuration error, as two modules with one tool name are. */
  checkNames(): void {
    const seen = new Map<string, string>();
    for (const supervisor of this.#supervisors) {
      for (const [name, tool] of supervisor.tools) {
        const first = seen.get(name);
        if (first !== undefined)
          throw new ToolpoolError('TOOLPOOL_ERR_DUPLICATE_TOOL', ConfigErrors.duplicateName(name, first, tool.source));
        seen.set(name, tool.source);
      }
    }
  }

  /** After a list change a clash is not the configuration's fault: the first server's tool stays, the other is left out with a warning. */
  #merge(): ReadonlyMap<string, RegisteredTool> {
    const merged = new Map<string, RegisteredTool>();
    for (const supervisor of this.#supervisors) {
      for (const [name, tool] of supervisor.tools) {
        const first = merged.get(name);
        if (first === undefined) merged.set(name, tool);
        else this.#warnOnce(ConfigErrors.duplicateName(name, first.source, tool.source));
      }
    }
    return merged;
  }

  #warnOnce(text: string): void {
    if (this.#warned.has(text)) return;
    this.#warned.add(text);
    process.emitWarning(`toolpool: ${text} The second is left out.`, 'ToolpoolWarning');
  }
}
