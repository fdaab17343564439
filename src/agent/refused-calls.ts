import type { ToolEvent } from '../core/events.ts';
import type { ToolCallContent } from '../core/messages.ts';
import type { ToolResultMessage } from '../core/tool.ts';
import { notRunResult } from './transcript.ts';
import type { ToolErrorCode } from '../core/error-codes.ts';

/**
 * Error results for calls that will not run, and the tool events that
 * close them as if they had: every tool_start, then every tool_end, in
 * source order (the order of a concurrent batch). A UI that tracks calls by
 * their events then sees each one end.
 */
export function refuseCalls(
  calls: readonly ToolCallContent[],
  text: (call: ToolCallContent) => string,
  errorCode: ToolErrorCode,
): { results: ToolResultMessage[]; events: ToolEvent[] } {
  const results = calls.map((call) => ({ ...notRunResult(call, text(call)), errorCode }));
  const events: ToolEvent[] = calls.map((call) => ({
    type: 'tool_start',
    toolCallId: call.id,
    toolName: call.name,
    args: call.arguments,
  }));
  for (const { toolCallId, toolName, content } of results) {
    events.push({
      type: 'tool_end',
      toolCallId,
      toolName,
      result: { content },
      isError: true,
      errorCode,
      durationMs: 0,
      queuedMs: 0,
      runningMs: 0,
    });
  }
  return { results, events };
}
