// Raw piscina's worker for the fresh-process cold start (case 18): imports
// the tool modules it is given (none for the trivial baseline) when it
// starts, then answers each task with its thread id and the tool's result.
import { threadId, workerData } from 'node:worker_threads';

const tools = new Map();
for (const file of workerData.tools) {
  const tool = (await import(file)).default;
  tools.set(tool.name, tool);
}
const context = { callId: 'raw', signal: new AbortController().signal, onUpdate() {}, host: {} };

export default function handle({ name, args }) {
  const tool = tools.get(name);
  return { threadId, result: tool ? tool.execute(args, context) : null };
}
