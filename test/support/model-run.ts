import { expect } from 'vitest';
import type { AssistantMessage } from '../../src/core/messages.ts';
import type { Model, ModelRequest, ModelStreamEvent } from '../../src/core/model.ts';

/** A one-message request, with any field overridden. */
export function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    messages: [{ role: 'user', content: 'hi', timestamp: 1 }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/** Reads a whole model turn; checks it ends with exactly one `done`. */
export async function run(
  model: Model,
  req: ModelRequest = request(),
): Promise<{ events: ModelStreamEvent[]; done: AssistantMessage }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of model.stream(req)) events.push(event);
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error(`last event is ${last?.type}, not done`);
  expect(events.filter((event) => event.type === 'done')).toHaveLength(1);
  return { events, done: last.message };
}
