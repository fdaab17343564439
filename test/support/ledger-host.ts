/**
 * A host process on a shared ledger, as after a restart or on a second
 * machine. argv[2] is JSON:
 *   { ledger: 'sqlite:<file>' | 'redis:<url>', tool: 'charge' | 'charge-idempotent',
 *     runId, calls: [{ id, name, arguments }] }                 — runs one batch, or
 *   { ledger, tool, snapshot: <file>, secret?, approved: [ids] } — restores an agent and resumes it.
 * Prints { results, replayed: { [id]: boolean }, pid } as JSON on stdout.
 * With `ready: <file>` it writes that file once its executor is made; with
 * `go: <file>` it then waits for that file before it starts the batch.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import {
  Agent,
  createExecutor,
  scriptedModel,
  sqliteLedger,
  type Ledger,
  type ToolEvent,
  type ToolResultMessage,
} from '../../src/index.ts';
import { redisLedger } from '../../src/adapters/bullmq/index.ts';
import { fixture } from './executors.ts';

interface HostConfig {
  ledger: string;
  tool: 'charge' | 'charge-idempotent';
  runId?: string;
  calls?: { id: string; name: string; arguments: Record<string, unknown> }[];
  snapshot?: string;
  secret?: string;
  approved?: string[];
  ready?: string;
  go?: string;
}

const config = JSON.parse(process.argv[2]!) as HostConfig;
const ledger: Ledger = config.ledger.startsWith('sqlite:')
  ? sqliteLedger(config.ledger.slice('sqlite:'.length))
  : redisLedger({ connection: config.ledger.slice('redis:'.length) });
const executor = await createExecutor({ tools: [fixture(`ledger/${config.tool}.ts`)], ledger });
const replayed: Record<string, boolean> = {};
const onEnd = (event: ToolEvent) => {
  if (event.type === 'tool_end') replayed[event.toolCallId] = event.replayed === true;
};
let results: ToolResultMessage[];
try {
  if (config.snapshot !== undefined) {
    const snapshot = JSON.parse(readFileSync(config.snapshot, 'utf8'));
    const agent = new Agent({
      model: scriptedModel([{ text: 'done' }]),
      executor,
      snapshot,
      ...(config.secret ? { snapshotSecret: config.secret } : {}),
    });
    agent.subscribe((event) => onEnd(event as ToolEvent));
    const added = await agent.resume({ approved: config.approved ?? [] });
    results = added.filter((message): message is ToolResultMessage => message.role === 'toolResult');
  } else {
    executor.subscribe(onEnd);
    if (config.ready) writeFileSync(config.ready, String(process.pid));
    while (config.go !== undefined && !existsSync(config.go)) await new Promise((resolve) => setTimeout(resolve, 5));
    results = (await executor.executeBatch(config.calls!, { runId: config.runId! })).results;
  }
  process.stdout.write(JSON.stringify({ results, replayed, pid: process.pid }));
} finally {
  await executor.close();
  await ledger.close?.();
}
