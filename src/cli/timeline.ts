import type { AgentEvent } from '../agent/events.ts';
import { textOf, toolCallsOf, type AssistantMessage } from '../core/messages.ts';
import type { ToolResult } from '../core/tool.ts';
import { LiveRegion, formatMs, oneLine, progressBar, type Output, type Style } from './terminal.ts';

/** Short, stable names for tool calls in the order they appear: `hash#1`, `calculator#4`. */
export class CallLabels {
  readonly #labels = new Map<string, string>();

  of(callId: string, toolName: string): string {
    let label = this.#labels.get(callId);
    if (!label) {
      label = `${toolName}#${this.#labels.size + 1}`;
      this.#labels.set(callId, label);
    }
    return label;
  }
}

/** A tool's progress as a fraction, when its update says one (`details.percent` or a text like `40%`). */
export function progressOf(partial: ToolResult): number | undefined {
  const details = partial.details as { percent?: unknown } | undefined;
  if (typeof details?.percent === 'number') return details.percent / 100;
  const text = partial.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const match = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  return match ? Number(match[1]) / 100 : undefined;
}

function resultText(result: Pick<ToolResult, 'content'>): string {
  return result.content
    .map((part) =>
      part.type === 'text' ? part.text : part.type === 'image' ? `[image ${part.mimeType}]` : `[${part.type}]`,
    )
    .join(' ');
}

/**
 * What to show of an update: its text, or, for an update that carries only
 * `details` (`onUpdate({ content: [], details: 'connecting' })`), the details
 * as a string, their `message` or `status`, or their JSON.
 */
export function updateText(partial: ToolResult): string {
  const text = resultText(partial);
  if (text.trim() !== '') return text;
  const details = partial.details;
  if (details === undefined || details === null) return '';
  if (typeof details !== 'object') return String(details);
  const { message, status } = details as { message?: unknown; status?: unknown };
  if (typeof message === 'string') return message;
  if (typeof status === 'string') return status;
  return safeJson(details);
}

/** An error result is printed whole (up to this many lines), so a validation error keeps the value it received. */
const ERROR_LINES = 8;

interface Running {
  label: string;
  fraction?: number;
  note?: string;
  /** Plain output: the last quarter reported, so a progress line is printed at 25/50/75/100 %. */
  quarter?: number;
}

/** Labels are padded to this width so durations line up. */
const LABEL_WIDTH = 13;

/**
 * Prints an agent run as it happens: turns, the prompt, the model's text as
 * it streams, each tool call's start and end, and, on a terminal, a live
 * progress bar per running tool (without one, a plain line per update).
 */
export class Timeline {
  readonly #region: LiveRegion;
  readonly #running = new Map<string, Running>();
  readonly #ended = new Set<string>();
  #streamingText = false;
  /** Turns before the current run: a run resumed after an approval carries on the turn that paused. */
  #turnBase = 0;
  #lastTurn = 0;
  #resuming = false;

  constructor(
    private readonly out: Output,
    private readonly style: Style,
    private readonly labels: CallLabels = new CallLabels(),
  ) {
    this.#region = new LiveRegion(out);
  }

  readonly listener = (event: AgentEvent): void => {
    switch (event.type) {
      case 'turn_start':
        return this.#onTurnStart(event.turn);
      case 'message_update':
        return this.#onDelta(event.message, event.delta);
      case 'message_end':
        if (event.message.role === 'user')
          return this.#print(`${this.style.cyan('you  ')} ${oneLine(textOf(event.message), this.#width(6))}`);
        if (event.message.role === 'assistant') return this.#onAssistantEnd(event.message);
        return this.#onResultMessage(event.message.toolCallId, event.message.toolName, event.message);
      case 'tool_start': {
        const label = this.labels.of(event.toolCallId, event.toolName);
        this.#running.set(event.toolCallId, { label });
        return this.#print(
          `${this.style.dim('▸')} ${label} ${this.style.dim(oneLine(safeJson(event.args), this.#width(label.length + 4)))}`,
        );
      }
      case 'tool_update':
        return this.#onUpdate(event.toolCallId, event.partial);
      case 'tool_end': {
        this.#running.delete(event.toolCallId);
        this.#ended.add(event.toolCallId);
        const label = this.labels.of(event.toolCallId, event.toolName);
        const mark = event.isError ? this.style.red('✗') : this.style.green('✓');
        const head = `${mark} ${label.padEnd(LABEL_WIDTH)} ${this.style.dim(formatMs(event.durationMs).padStart(8))}  `;
        const width = this.#width(Math.max(label.length, LABEL_WIDTH) + 14);
        if (!event.isError) this.#print(head + oneLine(resultText(event.result), width));
        else this.#printError(head, resultText(event.result), width);
        return this.#redraw();
      }
      case 'agent_end':
        this.#running.clear();
        this.#region.setLive([]);
        this.#region.endLine();
        return this.#onRunEnd(event);
      default:
        return undefined;
    }
  };

  #onTurnStart(turn: number): void {
    if (this.#resuming) {
      this.#resuming = false;
      this.#turnBase = this.#lastTurn - 1;
      return this.#print(this.style.dim(`── turn ${this.#lastTurn}, after approval ──`));
    }
    this.#lastTurn = this.#turnBase + turn;
    this.#print(this.style.dim(`── turn ${this.#lastTurn} ──`));
  }

  #onRunEnd(event: Extract<AgentEvent, { type: 'agent_end' }>): void {
    if (event.reason !== 'approval') {
      this.#turnBase = 0;
      return;
    }
    this.#resuming = event.turns > 0 || this.#resuming;
    for (const call of event.pending ?? []) {
      const label = this.labels.of(call.toolCallId, call.toolName);
      this.#print(
        `${this.style.yellow('⏸')} ${label} needs approval ${this.style.dim(oneLine(safeJson(call.args), this.#width(label.length + 18)))}`,
      );
    }
  }

  #onDelta(message: AssistantMessage, delta: { type: string; delta?: string }): void {
    if (delta.type === 'text_delta') {
      if (!this.#streamingText) {
        this.#region.endLine();
        this.#region.stream(`${this.style.magenta('model')} `);
        this.#streamingText = true;
      }
      this.#region.stream((delta.delta ?? '').replace(/\n/g, '\n      '));
      return;
    }
    this.#streamingText = false;
    if (!this.#region.enabled) return;
    // While the model writes tool calls, show them being written.
    this.#region.setLive(
      toolCallsOf(message).map((call) =>
        this.style.dim(
          `  ✎ ${call.name} ${typeof call.arguments === 'string' ? call.arguments : safeJson(call.arguments)}`,
        ),
      ),
    );
  }

  #onAssistantEnd(message: AssistantMessage): void {
    this.#streamingText = false;
    this.#region.setLive([]);
    this.#region.endLine();
    if (message.stopReason === 'error')
      this.#print(
        this.style.red(`✗ model error: ${oneLine(message.errorMessage ?? 'unknown error', this.#width(16))}`),
      );
    if (message.stopReason === 'aborted') this.#print(this.style.yellow('⊘ model turn aborted'));
    if (message.stopReason === 'length')
      this.#print(this.style.yellow('✂ the model hit its output limit; its tool calls are not run'));
  }

  /** A result that did not come through the executor (a cut-off or aborted turn) still gets a line. */
  #onResultMessage(callId: string, toolName: string, message: Pick<ToolResult, 'content'>): void {
    if (this.#ended.has(callId)) return;
    const label = this.labels.of(callId, toolName);
    this.#print(
      `${this.style.yellow('✗')} ${label} ${this.style.yellow(oneLine(resultText(message), this.#width(label.length + 3)))}`,
    );
  }

  /** The error's own lines (a validation error has one per field, then what was received), indented under the first. */
  #printError(head: string, text: string, width: number): void {
    const lines = text
      .split('\n')
      .map((line) => line.trimEnd())
      .filter((line) => line.trim() !== '');
    const shown = lines
      .slice(0, ERROR_LINES)
      .map((line, index) => (index === 0 ? oneLine(line, width) : cutLine(line, width)));
    if (lines.length > ERROR_LINES) shown.push(`… (${lines.length - ERROR_LINES} more lines)`);
    const indent = ' '.repeat(visibleWidth(head));
    shown.forEach((line, index) => this.#print((index === 0 ? head : indent) + this.style.red(line)));
  }

  #onUpdate(callId: string, partial: ToolResult): void {
    const running = this.#running.get(callId);
    if (!running) return;
    const fraction = progressOf(partial);
    const note = oneLine(updateText(partial), 40);
    if (this.#region.enabled) {
      running.fraction = fraction;
      running.note = note;
      return this.#redraw();
    }
    if (fraction === undefined)
      return note === '' ? undefined : this.#print(this.style.dim(`  … ${running.label} ${note}`));
    // Without a terminal, a line per quarter: enough to follow, few enough to read.
    const quarter = Math.floor(fraction * 4);
    if (quarter === running.quarter || quarter === 0) return;
    running.quarter = quarter;
    this.#print(this.style.dim(`  … ${running.label} ${Math.round(fraction * 100)}%`));
  }

  #redraw(): void {
    if (!this.#region.enabled) return;
    const lines: string[] = [];
    for (const { label, fraction, note } of this.#running.values()) {
      if (fraction !== undefined)
        lines.push(
          `  ${label.padEnd(LABEL_WIDTH)} ${this.style.cyan(progressBar(fraction))} ${String(Math.round(fraction * 100)).padStart(3)}%`,
        );
      else if (note) lines.push(`  ${label.padEnd(LABEL_WIDTH)} ${this.style.dim(note)}`);
    }
    this.#region.setLive(lines);
  }

  #print(line: string): void {
    this.#streamingText = false;
    this.#region.print(line);
  }

  #width(used: number): number {
    return Math.max(30, (this.out.columns || 120) - used - 1);
  }
}

/** Cuts a line to `max` characters but keeps its leading indentation (oneLine would collapse it). */
function cutLine(line: string, max: number): string {
  const indent = /^\s*/.exec(line)![0];
  return indent + oneLine(line, Math.max(10, max - indent.length));
}

function visibleWidth(text: string): number {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '').length;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
