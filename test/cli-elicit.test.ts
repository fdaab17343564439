/** `toolpool run` on a terminal: a tool's question as a form, a field per line. */
import { PassThrough } from 'node:stream';
import { expect, test } from 'vitest';
import { terminalElicit } from '../src/cli/elicit-prompt.ts';
import { styleFor } from '../src/cli/terminal.ts';
import type { ElicitRequest } from '../src/index.ts';

const FORM: ElicitRequest = {
  message: 'Book a table?',
  requestedSchema: {
    type: 'object',
    properties: {
      people: { type: 'integer', default: 2 },
      time: { type: 'string', enum: ['19:00', '20:00'] },
      outside: { type: 'boolean' },
    },
    required: ['time'],
  },
};

function terminal(lines: string[]) {
  const input = new PassThrough();
  let written = '';
  const out = { write: (text: string) => (written += text) };
  const ask = terminalElicit(input, out, styleFor(out, {}));
  input.end(lines.map((line) => `${line}\n`).join(''));
  return { ask, written: () => written };
}

const context = { toolName: 'book', callId: 'c1', signal: new AbortController().signal };

test('each field is asked on its line; an empty line takes the default', async () => {
  const { ask, written } = terminal(['', '20:00', 'yes']);
  expect(await ask(FORM, context)).toEqual({ action: 'accept', content: { people: 2, time: '20:00', outside: true } });
  expect(written()).toContain('book asks: Book a table?');
  expect(written()).toContain('time (one of 19:00, 20:00, required)');
});

test('!decline answers decline; the input ending cancels', async () => {
  expect(await terminal(['3', '!decline']).ask(FORM, context)).toEqual({ action: 'decline' });
  expect(await terminal(['3']).ask(FORM, context)).toEqual({ action: 'cancel' });
});

test("a tool's question cannot drive the terminal: escapes in its message, titles and choices are shown inert", async () => {
  const hostile: ElicitRequest = {
    message: 'Pay?\x1b[2J\x1b]52;c;cGF5\x07',
    requestedSchema: {
      type: 'object',
      properties: { ok: { type: 'string', title: 'OK\x1b[1A', enum: ['yes\u202e', 'no'] } },
    },
  };
  const { ask, written } = terminal(['no']);
  await ask(hostile, context);
  expect(written()).not.toMatch(/[\x1b\x07\u202e]/);
  expect(written()).toContain('Pay?\\x1b[2J\\x1b]52;c;cGF5\\x07');
});
