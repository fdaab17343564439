import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './server.ts';
import type { McpExecutor, McpServerOptions } from './types.ts';

export interface McpHost {
  /** Resolves when the client went away (stdin closed, stdout broken), with what happened. */
  readonly ended: Promise<string>;
  /** Stops serving: in-flight calls are aborted. Does not close the executor. */
  close(): Promise<void>;
}

/**
 * Serves the executor over this process's stdin and stdout (stdout carries
 * only the protocol). The client ends the session by closing our stdin.
 */
export async function serveOverStdio(executor: McpExecutor, options: McpServerOptions = {}): Promise<McpHost> {
  const server = createMcpServer(executor, options);
  let end!: (reason: string) => void;
  const ended = new Promise<string>((resolve) => (end = resolve));
  const onEnd = () => end('stdin closed');
  // A client that exits while we write makes stdout fail with EPIPE; without a listener that would throw.
  const onStdoutError = (error: Error) => end(`stdout failed (${error.message})`);
  process.stdin.once('end', onEnd).once('close', onEnd);
  process.stdout.on('error', onStdoutError);
  await server.connect(new StdioServerTransport());
  return {
    ended,
    async close() {
      process.stdin.off('end', onEnd).off('close', onEnd);
      await server.close();
      // Nothing reads stdin any more; let it stop holding the event loop open.
      process.stdin.destroy();
    },
  };
}
