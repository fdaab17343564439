import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { BeforeToolCallHook } from '../core/hooks.ts';
import type { Message } from '../core/messages.ts';
import type { ModelRequest } from '../core/model.ts';
import type { ScriptStep } from '../models/scripted.ts';
import type { ToolResultMessage } from '../core/tool.ts';

/**
 * The demo's model: three scripted turns. The later ones are functions of
 * the request, so they answer what the tools really returned.
 *
 * Turn 1 calls six tools at once: three CPU-heavy hashes (side by side in
 * workers, each with a progress bar), a calculator call with a wrong
 * argument type (a validation error), a read of `.env` (blocked by the
 * demo's beforeToolCall policy) and a flaky service that crashes its worker.
 * Turn 2 corrects the calculator call and reads an allowed file instead.
 * Turn 3 sums up and saves the summary with write_file, which needs a
 * person's approval: the run pauses there. Turn 4 confirms the write.
 */
export function demoScript({ rounds, delayMs }: { rounds: number; delayMs: number }): ScriptStep[] {
  return [
    {
      delayMs,
      text: 'I will stretch the three passwords in parallel, work out the total, read the settings and ping the flaky service.',
      toolCalls: [
        { name: 'hash', arguments: { text: 'correct horse battery staple', rounds, progressSteps: 20 } },
        {
          name: 'hash',
          arguments: { text: 'Tr0ub4dor&3', rounds: Math.round(rounds * 0.8), algorithm: 'sha512', progressSteps: 20 },
        },
        { name: 'hash', arguments: { text: 'hunter2', rounds: Math.round(rounds * 1.2), progressSteps: 20 } },
        { name: 'calculator', arguments: { expression: '(1 + 2) * 3 / 7', precision: 'two' } },
        { name: 'read_file', arguments: { path: '.env' } },
        { name: 'flaky', arguments: { mode: 'crash' } },
      ],
    },
    (request) => correctMistakes(request, delayMs),
    (request) => sumUp(request, delayMs),
    (request) => confirmSaved(request, delayMs),
  ];
}

/** Where the demo's model saves its summary (inside the demo's scratch folder). */
export const SUMMARY_FILE = 'summary.md';

/** Blocks reads of secrets, the way a host would guard a file tool. */
export const demoPolicy: BeforeToolCallHook = ({ toolCall, args }) => {
  if (toolCall.name === 'read_file' && /^\.env|secret/i.test(basename(String(args.path)))) {
    return {
      block: true,
      reason: `Blocked by the host's policy: ${String(args.path)} may hold secrets, so the model may not read it.`,
    };
  }
  return undefined;
};

function correctMistakes(request: ModelRequest, delayMs: number) {
  const results = toolResults(request.messages);
  const calculator = results.find((r) => r.toolName === 'calculator');
  const readFile = results.find((r) => r.toolName === 'read_file');
  const toolCalls = [];
  const notes = [];
  if (calculator?.isError && /precision/.test(text(calculator))) {
    notes.push('The calculator says precision must be an integer, so I call it again with 2.');
    toolCalls.push({ name: 'calculator', arguments: { expression: '(1 + 2) * 3 / 7', precision: 2 } });
  }
  if (readFile?.isError) {
    notes.push('Reading .env was blocked, so I read package.json instead.');
    toolCalls.push({ name: 'read_file', arguments: { path: 'package.json', maxBytes: 200 } });
  }
  return { delayMs, text: notes.join(' ') || 'Everything worked the first time.', toolCalls };
}

function sumUp(request: ModelRequest, delayMs: number) {
  const results = toolResults(request.messages);
  const hashes = results.filter((r) => r.toolName === 'hash' && !r.isError).map((r) => text(r).slice(0, 12));
  const sum = [...results].reverse().find((r) => r.toolName === 'calculator' && !r.isError);
  const file = [...results].reverse().find((r) => r.toolName === 'read_file' && !r.isError);
  const flaky = results.find((r) => r.toolName === 'flaky');
  const name = file ? /"name"\s*:\s*"([^"]+)"/.exec(text(file))?.[1] : undefined;
  const lines = [
    `Stretched digests: ${hashes.map((h) => `${h}…`).join(', ') || 'none'}.`,
    sum ? `Total: ${text(sum)}.` : 'The calculator never answered.',
    name ? `The settings file belongs to the package "${name}".` : 'I could not read a settings file.',
    flaky?.isError
      ? 'The flaky service crashed its worker; that became an error result and the run went on.'
      : 'The flaky service answered.',
  ];
  const summary = lines.join(' ');
  return {
    delayMs,
    text: `${summary} I will save this summary to ${SUMMARY_FILE}.`,
    toolCalls: [{ name: 'write_file', arguments: { path: SUMMARY_FILE, text: `${summary}\n` } }],
  };
}

function confirmSaved(request: ModelRequest, delayMs: number) {
  const write = [...toolResults(request.messages)].reverse().find((r) => r.toolName === 'write_file');
  if (!write) return { delayMs, text: 'The summary was not saved.' };
  return { delayMs, text: write.isError ? `The summary was not saved: ${text(write)}` : `Saved: ${text(write)}` };
}

function toolResults(messages: Message[]): ToolResultMessage[] {
  return messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
}

function text(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * Rounds of sha256 that take about `targetMs` on this machine, so the
 * progress bars move for about a second on a fast or a slow computer.
 */
export function calibrateRounds(targetMs: number): number {
  let digest: Buffer = Buffer.from('calibrate');
  let rounds = 0;
  const started = performance.now();
  while (performance.now() - started < 20) {
    for (let i = 0; i < 1000; i++) digest = createHash('sha256').update(digest).digest();
    rounds += 1000;
  }
  const perMs = rounds / (performance.now() - started);
  return Math.min(5_000_000, Math.max(50_000, Math.round((perMs * targetMs) / 1000) * 1000));
}
