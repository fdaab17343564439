import { resolve } from 'node:path';
import { StreamableHTTPClientTransport, type OAuthClientProvider, type Transport } from '@modelcontextprotocol/client';
import { McpErrors, errorMessage } from '../core/errors.ts';
import { checkSandboxSupport } from '../isolation/sandbox/bwrap-support.ts';
import { boundedFetch } from './bounded-fetch.ts';
import { resolveCommand } from './command.ts';
import type { HttpPlan, StdioPlan } from './config.ts';
import { processLaunch, type LaunchTarget } from './launch.ts';
import { sandboxLaunch } from './sandbox-launch.ts';
import { ServerProcess, describeEnd } from './server-process.ts';
import { StdioTransport } from './stdio-transport.ts';
import { ToolpoolError } from '../core/error-codes.ts';

/** How a session reaches its server: a process toolpool started, or a URL. */
export interface Endpoint {
  readonly transport: Transport;
  /** What the transport runs over: the SDK tells a server that is silent at the probe by it. */
  readonly kind: 'stdio' | 'http';
  /** A process toolpool can kill; a remote server's session can only be dropped. */
  readonly killable: boolean;
  /** Set when the server broke the protocol and was killed for it. */
  readonly brokenBy: string | undefined;
  /** How the server ended (`exit code 3`), once it has; undefined for a remote server. */
  ended(): Promise<string | undefined>;
  /** The end of what it wrote to stderr. */
  stderrTail(): string;
  /** Kills it with everything it started (a remote server: drops the session). */
  kill(): void;
  /** Asks it to stop, then kills it; bounded. */
  stop(): Promise<void>;
  /** Keeps this process alive for it while `busy` (see ServerProcess.hold). */
  hold(busy: boolean): void;
}

export interface StdioEndpointOptions {
  maxLineBytes: number;
  /** The sandbox's private /tmp, in bytes. */
  tmpBytes: number;
  /** How long a server may take to exit once its stdin is closed. */
  stopGraceMs: number;
}

/** Starts the server of `plan` in its tier; throws a message naming the server when it cannot be started. */
export async function startStdioEndpoint(plan: StdioPlan, options: StdioEndpointOptions): Promise<Endpoint> {
  const cwd = resolve(plan.config.cwd ?? process.cwd());
  const program = resolveCommand(plan.config.command, cwd);
  if (program === undefined)
    throw new ToolpoolError(
      'TOOLPOOL_ERR_MCP_SERVER',
      McpErrors.commandNotFound(plan.name, plan.config.command, plan.config.command.includes('/')),
    );
  const target: LaunchTarget = { program, args: plan.config.args ?? [], env: plan.config.env ?? {}, cwd };
  const launch =
    plan.isolation === 'sandbox'
      ? await sandboxLaunch(target, {
          bwrap: await sandboxBwrap(plan.name),
          permissions: plan.config.permissions ?? {},
          netTargets: plan.netTargets,
          tmpBytes: options.tmpBytes,
          domainKey: `mcp:${plan.name}:${program}`,
        })
      : await processLaunch(target);
  const server = new ServerProcess(launch);
  let brokenBy: string | undefined;
  const transport = new StdioTransport(server, options.maxLineBytes, (problem) => {
    brokenBy ??= problem;
    server.kill();
  });
  return {
    transport,
    kind: 'stdio',
    killable: true,
    get brokenBy() {
      return brokenBy;
    },
    ended: async () => {
      const end = await server.ended;
      return describeEnd(end);
    },
    stderrTail: () => server.stderrTail,
    kill: () => server.kill(),
    stop: () => server.stop(options.stopGraceMs),
    hold: (busy) => server.hold(busy),
  };
}

/** The bwrap to use, or the sandbox tier's own error (what to install), told as this server's. */
async function sandboxBwrap(name: string): Promise<string> {
  try {
    return await checkSandboxSupport();
  } catch (error) {
    throw new ToolpoolError(
      'TOOLPOOL_ERR_SANDBOX_UNAVAILABLE',
      McpErrors.sandboxUnavailable(name, errorMessage(error)),
    );
  }
}

/** How long dropping a remote session may take. */
const TERMINATE_MS = 1_000;

/** A Streamable HTTP server: the SDK's transport, with the configured headers on every request and what it answers bounded. */
export function httpEndpoint(plan: HttpPlan, maxMessageBytes: number): Endpoint {
  let brokenBy: string | undefined;
  // The SDK only reports a broken event stream (its request would wait for the call's timeout): end the session,
  // which fails its calls now, naming the problem; the next call opens a new one.
  const fetch = boundedFetch(maxMessageBytes, (problem) => {
    brokenBy ??= problem;
    void transport.close().catch(() => undefined);
  });
  const transport = new StreamableHTTPClientTransport(plan.url, {
    requestInit: { headers: { ...plan.headers } },
    fetch,
    // The SDK's own provider type: the config's is its shape, written out so toolpool's types do not need the SDK.
    ...(plan.authProvider ? { authProvider: plan.authProvider as OAuthClientProvider } : {}),
  });
  return {
    transport,
    kind: 'http',
    killable: false,
    get brokenBy() {
      return brokenBy;
    },
    ended: async () => undefined,
    stderrTail: () => '',
    kill: () => void transport.close().catch(() => undefined),
    hold: () => undefined, // the SDK's fetch streams are its own
    async stop() {
      // A polite end of the session (DELETE), bounded: a server that does not answer is simply left.
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise((done) => setTimeout(done, TERMINATE_MS).unref()),
      ]);
      await transport.close().catch(() => undefined);
    },
  };
}
