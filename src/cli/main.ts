import { enableCodeCache } from './code-cache.ts';
import { CliError, oneLineMessage } from './errors.ts';
import { toolpoolVersion } from '../core/version.ts';

const mainHelp = `Usage: toolpool <command> [options]

Run an LLM agent's tools in a worker pool.

Commands:
  demo    A scripted agent run with the example tools (no network, no key)
  run     An agent run against a real model (OpenAI, Anthropic, or a compatible server)
  serve   Serve tools to MCP clients (Claude Desktop, Claude Code, Cursor, the MCP Inspector)
  worker  Run tool calls from a BullMQ queue, for hosts on other machines (toolpool/bullmq)
  help    Show help for a command

Options:
  -h, --help     Show this help
  -v, --version  Show the version

Run "toolpool <command> --help" for a command's options.`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  // Each command loads only its own code: `serve`, which an MCP client starts on every launch, skips the Agent and the models.
  demo: async (argv) => (await import('./demo.ts')).demoCommand(argv),
  run: async (argv) => (await import('./run.ts')).runCommand(argv),
  // Loaded on demand: it needs @modelcontextprotocol/sdk, an optional peer dependency.
  serve: async (argv) => (await import('./serve.ts')).serveCommand(argv),
  // Loaded on demand too: it needs bullmq and ioredis, optional peer dependencies.
  worker: async (argv) => (await import('./worker.ts')).workerCommand(argv),
};

/** The `toolpool` command. Returns the exit code; errors become one line on stderr. */
export async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (error) {
    if (error instanceof CliError) {
      process.stderr.write(`toolpool: ${error.message}\n`);
      if (process.env.TOOLPOOL_DEBUG && error.cause instanceof Error) process.stderr.write(`${error.cause.stack}\n`);
      return error.exitCode;
    }
    process.stderr.write(`toolpool: ${oneLineMessage(error)}\n`);
    if (process.env.TOOLPOOL_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`);
    return 1;
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help') {
    process.stdout.write(`${mainHelp}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '-v' || command === '--version') {
    process.stdout.write(`${toolpoolVersion()}\n`);
    return 0;
  }
  if (command === 'help') {
    const topic = rest[0];
    if (topic && Object.hasOwn(COMMANDS, topic)) return COMMANDS[topic]!(['--help']);
    process.stdout.write(`${mainHelp}\n`);
    return 0;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run)
    throw new CliError(
      `unknown command "${command}". Commands: ${Object.keys(COMMANDS).join(', ')}. Run "toolpool --help".`,
      2,
    );
  enableCodeCache();
  return run(rest);
}
