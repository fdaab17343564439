import type { AgentEndReason, AgentEvent } from '../agent/events.ts';
import type { CallLabels } from './timeline.ts';
import { formatMs, oneLine, type Style } from './terminal.ts';

interface CallStats {
  label: string;
  outcome: 'ok' | 'error' | 'not run';
  durationMs: number;
  text: string;
}

interface BatchStats {
  turn: number;
  calls: number;
  firstStart: number;
  lastEnd: number;
  toolMs: number;
}

/** Collects what the summary at the end of a run shows: turns, calls, timings. */
export class RunStats {
  readonly startedAt = performance.now();
  endedAt: number | undefined;
  turns = 0;
  reason: AgentEndReason | undefined;
  error: string | undefined;
  outputTokens = 0;
  readonly calls: CallStats[] = [];
  readonly batches: BatchStats[] = [];
  readonly #executed = new Set<string>();
  #batch: BatchStats | undefined;

  constructor(private readonly labels: CallLabels) {}

  readonly listener = (event: AgentEvent): void => {
    const now = performance.now();
    switch (event.type) {
      case 'turn_start':
        this.#batch = undefined;
        return;
      case 'message_end':
        // Counted by answers, not turn numbers: a run resumed after an approval numbers its turns from 1 again.
        if (event.message.role === 'assistant') {
          this.turns++;
          this.outputTokens += event.message.usage?.outputTokens ?? 0;
        }
        if (event.message.role === 'toolResult' && !this.#executed.has(event.message.toolCallId)) {
          const { toolCallId, toolName, content } = event.message;
          this.calls.push({
            label: this.labels.of(toolCallId, toolName),
            outcome: 'not run',
            durationMs: 0,
            text: firstText(content),
          });
        }
        return;
      case 'tool_start':
        this.labels.of(event.toolCallId, event.toolName);
        if (!this.#batch) {
          this.#batch = { turn: this.turns, calls: 0, firstStart: now, lastEnd: now, toolMs: 0 };
          this.batches.push(this.#batch);
        }
        this.#batch.calls++;
        return;
      case 'tool_end':
        this.#executed.add(event.toolCallId);
        if (this.#batch) {
          this.#batch.lastEnd = now;
          this.#batch.toolMs += event.durationMs;
        }
        this.calls.push({
          label: this.labels.of(event.toolCallId, event.toolName),
          outcome: event.isError ? 'error' : 'ok',
          durationMs: event.durationMs,
          text: firstText(event.result.content),
        });
        return;
      case 'agent_end':
        this.endedAt = now;
        this.reason = event.reason;
        this.error = event.error ?? event.hookStopReason;
        return;
      default:
        return;
    }
  };

  get wallMs(): number {
    return (this.endedAt ?? performance.now()) - this.startedAt;
  }

  /** The summary table: one row per call, then a line per batch. */
  render(style: Style, width = 100): string[] {
    const ok = this.calls.filter((c) => c.outcome === 'ok').length;
    const lines = [
      style.bold('Summary'),
      `  ${this.turns} model turn(s), ${this.calls.length} tool call(s): ${style.green(`${ok} ok`)}, ${style.red(`${this.calls.length - ok} error`)}; ` +
        `ended: ${this.reason ?? '?'}${this.error ? ` (${oneLine(this.error, 80)})` : ''}; wall time ${formatMs(this.wallMs)}`,
    ];
    const labelWidth = Math.max(8, ...this.calls.map((c) => c.label.length));
    for (const call of this.calls) {
      const outcome = call.outcome === 'ok' ? style.green('ok     ') : style.red(call.outcome.padEnd(7));
      const time = call.outcome === 'not run' ? '       -' : formatMs(call.durationMs).padStart(8);
      lines.push(
        `  ${call.label.padEnd(labelWidth)}  ${outcome} ${time}  ${style.dim(oneLine(call.text, Math.max(20, width - labelWidth - 24)))}`,
      );
    }
    for (const batch of this.batches) {
      const wall = batch.lastEnd - batch.firstStart;
      const overlap = wall > 0 ? batch.toolMs / wall : 1;
      lines.push(
        `  turn ${batch.turn}: ${batch.calls} call(s) in ${formatMs(wall)} wall, ${formatMs(batch.toolMs)} of tool time` +
          (batch.calls > 1 && wall > 100 && overlap > 1.2
            ? ` (${overlap.toFixed(1)}× overlap: they ran side by side)`
            : ''),
      );
    }
    return lines;
  }
}

function firstText(content: ReadonlyArray<{ type: string; text?: string }>): string {
  return content.map((part) => (part.type === 'text' ? (part.text ?? '') : '[image]')).join(' ');
}
