import { Agent } from '../agent/agent.ts';
import { createExecutor, type Executor } from '../executor/executor.ts';
import { textOf, type AssistantMessage, type Message } from '../core/messages.ts';
import type { ExecutorOptions, ToolEntry } from '../core/options.ts';
import { helpFlag, integerFlag } from './args.ts';
import { inFlagTerms, parseFlags } from './flags.ts';
import { terminalElicit } from './elicit-prompt.ts';
import type { ElicitHandler } from '../core/elicitation.ts';
import { askApprovals, describePending, type Input } from './approval-prompt.ts';
import { EXIT_NEEDS_APPROVAL, oneLineMessage, runError, usageError } from './errors.ts';
import { modelFromFlag } from './model-flag.ts';
import { RunStats } from './stats.ts';
import { styleFor, type Output } from './terminal.ts';
import { CallLabels, Timeline } from './timeline.ts';
import { inConfigTerms, readMcpConfig } from './mcp-config.ts';
import { expandToolPaths } from './tool-paths.ts';
import type { Ledger } from '../core/ledger.ts';
import { sqliteLedger } from '../executor/sqlite-ledger.ts';

export const runHelp = `Usage: toolpool run --model <provider:model> [--tools <file|folder>]... [options] "prompt"

Runs an agent against a real model. Its tools run in a worker pool; the
timeline (turns, streamed text, tool calls with progress) goes to stderr,
the final answer to stdout.

Options:
  -m, --model <provider:model>  openai:<model> or anthropic:<model>, e.g. openai:gpt-4o-mini
  -t, --tools <file|folder>     Tool modules (default export made with defineTool); a folder loads
                                its .ts/.mts/.js/.mjs files and its subfolders' (not _names or lib/;
                                helpers without a tool export are skipped). Repeatable or comma-separated.
      --mcp-config <file>       MCP servers whose tools the agent gets, in the { "mcpServers": { ... } }
                                format of Claude Desktop, Cursor and VS Code; each server runs in a
                                sandbox (bubblewrap) unless it says "isolation": "process"
      --base-url <url>          An API-compatible server (vLLM, Ollama, llama.cpp, LM Studio...),
                                with or without /v1. With it, no API key is needed.
      --system <text>           System prompt
      --max-turns <n>           Model turns at most (default 50)
      --ledger <file>           Record tool calls in this SQLite file (Node 22.13+), so that none runs
                                twice: a call that ran under the run id is answered from it
      --run-id <id>             The run id calls are keyed by in the ledger (default: a random one);
                                give the same one to re-run a crashed run without repeating its calls
      --tool-options <json>     Options for tool modules whose default export is a factory
                                (default {"root": "<current folder>"}, e.g. for read-file)
  -q, --quiet                   No timeline; print only the final answer
  -h, --help                    Show this help

Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY   The provider's key (not needed with --base-url)

Approvals:
  A tool with needsApproval (e.g. tools/write-file.ts) pauses the run. On a
  terminal, toolpool shows each such call with its arguments and asks y/n;
  without a terminal on stdin it prints the pending calls and exits with 3.

Exit codes: 0 answered, 1 failed (model error, missing key, bad tool, max turns), 2 bad usage,
            3 a tool call needs approval and stdin is not a terminal to ask on, 130 interrupted.

Examples:
  toolpool run --tools tools/ --model openai:gpt-4o-mini "What is 2^20 + 17?"
  toolpool run --mcp-config mcp.json --model anthropic:claude-sonnet-4-5 "Summarise notes/todo.md"`;

export interface RunIO {
  stdout: Output;
  stderr: Output;
  env: NodeJS.ProcessEnv;
  /** Where approvals are asked for; only a TTY is asked. */
  stdin: Input;
}

const defaultIO: RunIO = { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin };

export async function runCommand(argv: string[], io: RunIO = defaultIO): Promise<number> {
  const { values, positionals } = parseFlags('run', {
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      ...helpFlag,
      model: { type: 'string', short: 'm' },
      tools: { type: 'string', short: 't', multiple: true },
      'mcp-config': { type: 'string' },
      'base-url': { type: 'string' },
      system: { type: 'string' },
      'max-turns': { type: 'string' },
      'tool-options': { type: 'string' },
      ledger: { type: 'string' },
      'run-id': { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
    },
  });
  if (values.help) {
    io.stdout.write(`${runHelp}\n`);
    return 0;
  }
  const prompt = positionals.join(' ').trim();
  if (!values.model) throw usageError('run', 'missing --model <provider:model>, e.g. --model openai:gpt-4o-mini');
  if (!prompt) throw usageError('run', 'missing the prompt: toolpool run --model ... "your prompt"');
  const maxTurns = integerFlag('run', 'max-turns', values['max-turns']);
  const toolOptions = parseToolOptions(values['tool-options']);

  const model = await modelFromFlag(values.model, values['base-url'], io.env);
  const mcpServers = values['mcp-config'] !== undefined ? await readMcpConfig(values['mcp-config']) : undefined;
  if (values['run-id'] === '') throw usageError('run', '--run-id needs a non-empty id');
  const ledger = values.ledger !== undefined ? openLedger(values.ledger) : undefined;
  let executor: Executor;
  try {
    // A tool's question (ctx.elicit) is asked on the terminal, when there is one to ask on.
    const onElicit =
      io.stdin.isTTY === true ? terminalElicit(io.stdin, io.stderr, styleFor(io.stderr, io.env)) : undefined;
    executor = await loadTools(values.tools ?? [], toolOptions, mcpServers, values['mcp-config'], ledger, onElicit);
  } catch (error) {
    await ledger?.close?.();
    throw error;
  }
  const style = styleFor(io.stderr, io.env);
  const labels = new CallLabels();
  const stats = new RunStats(labels);
  const agent = new Agent({
    model,
    executor,
    ...(values.system !== undefined ? { systemPrompt: values.system } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(values['run-id'] !== undefined ? { runId: values['run-id'] } : {}),
  });
  agent.subscribe(stats.listener);
  if (!values.quiet) agent.subscribe(new Timeline(io.stderr, style, labels).listener);

  let interrupts = 0;
  // Ctrl-C while a question is open stops asking too (abort() then answers the paused calls).
  const asking = new AbortController();
  const onSigint = () => {
    asking.abort();
    if (++interrupts > 1) process.exit(130);
    io.stderr.write('\naborting... (Ctrl-C again to quit at once)\n');
    agent.abort();
  };
  process.on('SIGINT', onSigint);
  let added: Message[];
  try {
    added = await agent.prompt(prompt);
    while (agent.pendingApprovals.length > 0) {
      if (io.stdin.isTTY !== true) return reportPending(agent, io, labels);
      const decisions = await askApprovals(agent.pendingApprovals, io.stdin, io.stderr, style, labels, asking.signal);
      if (asking.signal.aborted) return 130;
      added = [...added, ...(await agent.resume(decisions))];
    }
  } finally {
    process.off('SIGINT', onSigint);
    await executor.close();
    await ledger?.close?.();
  }
  return report(stats, added, io, values.quiet === true, style);
}

/** No terminal to ask on: say which calls wait, and exit with the code that means so. */
function reportPending(agent: Agent, io: RunIO, labels: CallLabels): number {
  io.stderr.write(
    'toolpool: the run stopped because these tool calls need approval, and stdin is not a terminal to ask on:\n',
  );
  for (const call of agent.pendingApprovals) io.stderr.write(`  ${describePending(call, labels, io.stderr.columns)}\n`);
  io.stderr.write('Run the command on a terminal to approve or reject each call.\n');
  return EXIT_NEEDS_APPROVAL;
}

function parseToolOptions(json: string | undefined): unknown {
  if (json === undefined) return { root: process.cwd() };
  try {
    return JSON.parse(json);
  } catch (error) {
    throw usageError('run', `--tool-options is not valid JSON: ${oneLineMessage(error)}`);
  }
}

/** --ledger: a SQLite file; on a Node without node:sqlite, the error says which Node it needs. */
function openLedger(file: string): Ledger {
  try {
    return sqliteLedger(file);
  } catch (error) {
    throw runError(`--ledger ${file}: ${oneLineMessage(error)}`, error);
  }
}

async function loadTools(
  values: string[],
  options: unknown,
  mcpServers: ExecutorOptions['mcpServers'],
  configFile: string | undefined,
  ledger: Ledger | undefined,
  onElicit: ElicitHandler | undefined,
): Promise<Executor> {
  const paths = await expandToolPaths(values);
  const tools: ToolEntry[] = paths.map((module) => ({ module, options }));
  try {
    return await createExecutor({
      tools,
      ...(mcpServers ? { mcpServers } : {}),
      ...(ledger ? { ledger } : {}),
      ...(onElicit ? { onElicit } : {}),
    });
  } catch (error) {
    throw runError(inConfigTerms(inFlagTerms(oneLineMessage(error)), configFile), error);
  }
}

function report(
  stats: RunStats,
  added: readonly { role: string }[],
  io: RunIO,
  quiet: boolean,
  style: ReturnType<typeof styleFor>,
): number {
  if (!quiet) {
    io.stderr.write('\n');
    for (const line of stats.render(style, io.stderr.columns || 100)) io.stderr.write(`${line}\n`);
  }
  if (stats.reason === 'aborted') return 130;
  if (stats.reason === 'error') throw runError(oneLineMessage(stats.error ?? 'the run failed'));
  const answer = [...added].reverse().find((m): m is AssistantMessage => m.role === 'assistant');
  const text = answer ? textOf(answer).trim() : '';
  // On a terminal the answer was just streamed in the timeline; print it again only for a pipe or with --quiet.
  const alreadyShown = !quiet && io.stdout.isTTY === true && io.stderr.isTTY === true;
  if (text && !alreadyShown) io.stdout.write(`${text}\n`);
  if (stats.reason === 'maxTurns')
    throw runError(`stopped after ${stats.turns} turns (--max-turns) before the model gave a final answer`);
  if (stats.reason === 'length') throw runError("the model's answer was cut off by its output token limit");
  return 0;
}
