/**
 * Resumes an agent in a fresh process, as after a restart: reads a snapshot
 * (JSON) from stdin, restores it with a new executor and model, resumes with
 * the decisions given as argv[2] (JSON), and prints what the run added and
 * every event type as JSON on stdout.
 */
import { text } from 'node:stream/consumers';
import { Agent, createExecutor, scriptedModel, type AgentEvent } from '../../src/index.ts';
import { textOf } from '../../src/core/messages.ts';
import { fixture } from './executors.ts';

const snapshot = JSON.parse(await text(process.stdin));
const decisions = JSON.parse(process.argv[2] ?? '{}');
const executor = await createExecutor({ tools: [fixture('pay.ts')] });
const model = scriptedModel([
  (request) => ({
    text: `Results: ${request.messages
      .filter((m) => m.role === 'toolResult')
      .map((m) => textOf(m))
      .join('; ')}`,
  }),
]);
const agent = new Agent({ model, executor, snapshot });
const events: string[] = [];
agent.subscribe(
  (event: AgentEvent) => void events.push(event.type === 'agent_end' ? `agent_end:${event.reason}` : event.type),
);
try {
  const added = await agent.resume(decisions);
  process.stdout.write(JSON.stringify({ added, events, pid: process.pid }));
} finally {
  await executor.close();
}
