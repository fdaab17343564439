import { describe, expect, test } from 'vitest';
import { Timeline, updateText } from '../src/cli/timeline.ts';
import { styleFor } from '../src/cli/terminal.ts';
import type { AgentEvent } from '../src/agent/agent.ts';

/** A Timeline writing to a plain (non-terminal) output, as in CI or a pipe. */
function plainTimeline() {
  let written = '';
  const out = { write: (text: string) => (written += text), isTTY: false, columns: 100 };
  const timeline = new Timeline(out, styleFor(out));
  const send = (event: Record<string, unknown>) => timeline.listener(event as unknown as AgentEvent);
  return { send, output: () => written };
}

describe('CLI progress lines', () => {
  test('updates without details.percent show their text, or their details; an empty update prints nothing', () => {
    const { send, output } = plainTimeline();
    send({ type: 'tool_start', toolCallId: 'c1', toolName: 'fetch', args: {} });
    send({ type: 'tool_update', toolCallId: 'c1', toolName: 'fetch', partial: { content: [], details: 'connecting' } });
    send({
      type: 'tool_update',
      toolCallId: 'c1',
      toolName: 'fetch',
      partial: { content: [{ type: 'text', text: 'got headers' }] },
    });
    send({
      type: 'tool_update',
      toolCallId: 'c1',
      toolName: 'fetch',
      partial: { content: [], details: { message: 'reading body', bytes: 10 } },
    });
    send({ type: 'tool_update', toolCallId: 'c1', toolName: 'fetch', partial: { content: [] } });
    expect(
      output()
        .split('\n')
        .filter((line) => line.startsWith('  …')),
    ).toEqual(['  … fetch#1 connecting', '  … fetch#1 got headers', '  … fetch#1 reading body']);
  });

  test('updateText falls back from content to details: a string, message, status, then JSON', () => {
    expect(updateText({ content: [{ type: 'text', text: '40%' }], details: 'x' })).toBe('40%');
    expect(updateText({ content: [], details: 7 })).toBe('7');
    expect(updateText({ content: [], details: { status: 'queued' } })).toBe('queued');
    expect(updateText({ content: [], details: { step: 2 } })).toBe('{"step":2}');
    expect(updateText({ content: [] })).toBe('');
  });

  test('a long error result keeps its lines, up to a bound', () => {
    const { send, output } = plainTimeline();
    send({ type: 'tool_start', toolCallId: 'c1', toolName: 'calc', args: {} });
    const text = [
      'Validation failed for tool "calc":',
      ...Array.from({ length: 12 }, (_, i) => `  - f${i}: is required but missing`),
      'Received arguments: {}',
    ].join('\n');
    send({
      type: 'tool_end',
      toolCallId: 'c1',
      toolName: 'calc',
      result: { content: [{ type: 'text', text }] },
      isError: true,
      durationMs: 1,
      queuedMs: 0,
      runningMs: 1,
    });
    const lines = output().trimEnd().split('\n').slice(1); // after the tool_start line
    expect(lines[0]).toMatch(/^✗ calc#1 .*Validation failed for tool "calc":$/);
    expect(lines[1]).toMatch(/^ +- f0: is required but missing$/);
    expect(lines).toHaveLength(9);
    expect(lines.at(-1)).toMatch(/… \(6 more lines\)$/);
  });
});
