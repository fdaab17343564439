import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent, type AgentOptions } from '../agent/agent.ts';
import { createExecutor } from '../executor/executor.ts';
import { scriptedModel } from '../models/scripted.ts';
import { helpFlag } from './args.ts';
import { parseFlags } from './flags.ts';
import { calibrateRounds, demoPolicy, demoScript } from './demo-script.ts';
import { runError } from './errors.ts';
import { RunStats } from './stats.ts';
import { styleFor, formatMs, type Output, type Style } from './terminal.ts';
import { CallLabels, Timeline } from './timeline.ts';

export const demoHelp = `Usage: toolpool demo [--fast]

A scripted agent run with the example tools: no network, no API key.
It shows, live:
  - three CPU-heavy hash calls running side by side in worker threads,
    each with a progress bar (plain progress lines when not on a terminal)
  - a calculator call with a wrong argument, which the model then corrects
  - a file read blocked by a beforeToolCall policy
  - a tool that crashes its worker, turned into an error result
  - a file write that needs a person's approval: the run pauses, its state
    goes through a JSON snapshot into a new agent, which resumes approved
    (toolpool run would ask you y/n here)
and ends with a summary of every call and its timing.

Options:
  --fast      No streaming delay and less hashing (for CI)
  -h, --help  Show this help`;

const LOOP_RESOLUTION_MS = 10;

/** The example tools: TypeScript sources in a clone, compiled JavaScript in an installed package. */
function exampleTool(name: string): string {
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`../../tools/${name}${extension}`, import.meta.url));
}

/** The folder with toolpool's package.json: what the demo's read_file tool may read. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

export async function demoCommand(argv: string[], out: Output = process.stdout): Promise<number> {
  const { values } = parseFlags('demo', {
    args: argv,
    strict: true,
    options: { ...helpFlag, fast: { type: 'boolean' } },
  });
  if (values.help) {
    out.write(`${demoHelp}\n`);
    return 0;
  }
  const style = styleFor(out);
  const fast = values.fast === true;
  out.write(`${style.bold('toolpool demo')} ${style.dim('— a scripted agent; its tools run in a worker pool')}\n`);

  const started = performance.now();
  // write_file writes only here, and the folder goes away at the end.
  const scratch = await mkdtemp(join(tmpdir(), 'toolpool-demo-'));
  const executor = await createExecutor({
    tools: [
      exampleTool('hash'),
      exampleTool('calculator'),
      { module: exampleTool('read-file'), options: { root: packageRoot() } },
      exampleTool('flaky'),
      { module: exampleTool('write-file'), options: { root: scratch } },
    ],
    beforeToolCall: demoPolicy,
    // Three workers ready, so the three hashes start at once.
    workers: { min: 3, max: 4 },
  }).catch((error: unknown) => {
    throw runError(`the demo tools failed to load: ${error instanceof Error ? error.message : String(error)}`);
  });
  out.write(
    style.dim(
      `${executor.definitions.length} tools loaded into workers in ${formatMs(performance.now() - started)}: ${executor.definitions.map((d) => d.name).join(', ')}\n`,
    ),
  );

  const labels = new CallLabels();
  const timeline = new Timeline(out, style, labels);
  const stats = new RunStats(labels);
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const model = scriptedModel(demoScript({ rounds: calibrateRounds(fast ? 150 : 900), delayMs: fast ? 0 : 12 }), {
    name: 'scripted-demo',
  });
  const systemPrompt = 'You are the toolpool demo agent.';
  let agent = new Agent({ model, executor, systemPrompt });
  const watch = (watched: Agent) => {
    watched.subscribe(timeline.listener);
    watched.subscribe(stats.listener);
  };
  watch(agent);
  const onSigint = () => agent.abort();
  process.once('SIGINT', onSigint);
  try {
    loopDelay.enable();
    await agent.prompt(
      'Stretch three passwords, add up (1 + 2) * 3 / 7, read the settings, check the flaky service and save a summary.',
    );
    while (agent.pendingApprovals.length > 0) {
      agent = resumeFromSnapshot(agent, { model, executor, systemPrompt }, out, style);
      watch(agent);
      await agent.resume({ approved: agent.pendingApprovals.map((call) => call.toolCallId) });
    }
    loopDelay.disable();
  } finally {
    process.off('SIGINT', onSigint);
    await executor.close();
    await rm(scratch, { recursive: true, force: true });
  }
  out.write('\n');
  for (const line of stats.render(style, out.columns || 100)) out.write(`${line}\n`);
  const toolMs = stats.calls.reduce((sum, call) => sum + call.durationMs, 0);
  const stallMs = Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS);
  out.write(
    `  main thread: longest event-loop stall ${formatMs(stallMs)} while ${formatMs(toolMs)} of tool work ran in workers\n`,
  );
  if (stats.reason === 'aborted') return 130;
  return stats.reason === 'stop' ? 0 : 1;
}

/**
 * The demo approves on its own, visibly, so it needs no input (CI runs it
 * without stdin). On the way it does what a server would across a restart:
 * the paused agent becomes JSON, and a new Agent is made from it.
 */
function resumeFromSnapshot(
  paused: Agent,
  options: Pick<AgentOptions, 'model' | 'executor' | 'systemPrompt'>,
  out: Output,
  style: Style,
): Agent {
  const saved = JSON.stringify(paused.snapshot());
  const again = new Agent({ ...options, snapshot: JSON.parse(saved) });
  const calls = again.pendingApprovals.map((call) => call.toolName).join(', ');
  out.write(
    `${style.yellow('✔')} demo: approving ${calls} on its own (toolpool run asks you y/n here); ` +
      `${style.dim(`the paused agent went through a ${formatBytes(saved.length)} JSON snapshot into a new Agent, which resumes`)}\n`,
  );
  return again;
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
}
