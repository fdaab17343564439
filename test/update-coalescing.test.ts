/**
 * The worker runtime's update window, driven by hand: the host's acks come
 * exactly when the test says, so the interleaving that load produces at
 * random (test/hostile/update-race.test.ts) happens every run here.
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { afterEach, expect, test } from 'vitest';
import type { ToolResult } from '../src/core/tool.ts';
import type { ExecuteTask } from '../src/isolation/worker/protocol.ts';
import { RunningCall, UPDATE_WINDOW } from '../src/isolation/worker/runtime/running-call.ts';

const channel = new MessageChannel();
afterEach(() => {
  while (receiveMessageOnPort(channel.port2));
});

const task: ExecuteTask = {
  module: 'unused.js',
  source: 'unused.ts',
  runId: 7,
  seq: 1,
  callId: 'c',
  batchRunId: undefined,
  args: {},
  maxResultBytes: 1_000_000,
  hostFunctions: [],
  measureUsage: false,
};

const update = (n: number): ToolResult => ({ content: [{ type: 'text', text: `update ${n}` }] });

/** What the runtime posted, in order: each update's text, then 'result'. */
function posted(): string[] {
  const texts: string[] = [];
  for (let entry = receiveMessageOnPort(channel.port2); entry; entry = receiveMessageOnPort(channel.port2)) {
    const message = entry.message as { t: string; partial?: ToolResult };
    const first = message.partial?.content[0];
    texts.push(message.t === 'update' && first?.type === 'text' ? first.text : message.t);
  }
  return texts;
}

test('an update posted once the window has room supersedes the one waiting: the waiting one never follows it', () => {
  let acknowledgeOnPoll = 0;
  const call: RunningCall = new RunningCall(
    task,
    channel.port1,
    () => Promise.reject(new Error('no host functions here')),
    () => {
      if (acknowledgeOnPoll > 0) call.acknowledge(acknowledgeOnPoll);
    },
  );
  const reply = call.run(() => {
    for (let n = 1; n <= UPDATE_WINDOW; n++) call.update(update(n));
    // The window is full and the host has consumed nothing: these two wait, latest wins.
    call.update(update(UPDATE_WINDOW + 1));
    call.update(update(UPDATE_WINDOW + 2));
    // The host catches up: the next update goes out at once.
    acknowledgeOnPoll = UPDATE_WINDOW;
    call.update(update(UPDATE_WINDOW + 3));
    return { content: [{ type: 'text', text: 'done' }] };
  });
  expect(reply).toMatchObject({ t: 'result', ok: true });
  const texts = posted();
  expect(texts.slice(-1)).toEqual([`update ${UPDATE_WINDOW + 3}`]);
  expect(texts).toHaveLength(UPDATE_WINDOW + 1);
});

test('the update waiting when the call ends is posted by the time its result is made, and it is the latest', () => {
  const call: RunningCall = new RunningCall(
    task,
    channel.port1,
    () => Promise.reject(new Error('no host functions here')),
    () => undefined,
  );
  const reply = call.run(() => {
    for (let n = 1; n <= UPDATE_WINDOW + 5; n++) call.update(update(n));
    return { content: [{ type: 'text', text: 'done' }] };
  });
  expect(reply).toMatchObject({ t: 'result', ok: true });
  const texts = posted();
  expect(texts).toHaveLength(UPDATE_WINDOW + 1);
  expect(texts.at(-1)).toBe(`update ${UPDATE_WINDOW + 5}`);
});

test('an update waiting for room that the tool made too large before it returned fails the call, as a direct one would', () => {
  const call: RunningCall = new RunningCall(
    { ...task, maxResultBytes: 1_000 },
    channel.port1,
    () => Promise.reject(new Error('no host functions here')),
    () => undefined,
  );
  const reply = call.run(() => {
    for (let n = 1; n <= UPDATE_WINDOW; n++) call.update(update(n));
    const waiting = update(UPDATE_WINDOW + 1);
    call.update(waiting);
    // Kept by reference while it waits: the tool grows it past the bound, then returns at once.
    waiting.content.push({ type: 'text', text: 'x'.repeat(5_000) });
    return { content: [{ type: 'text', text: 'done' }] };
  });
  expect(reply).toMatchObject({ t: 'result', ok: false, code: 'THREW' });
  expect(posted()).toHaveLength(UPDATE_WINDOW);
});
