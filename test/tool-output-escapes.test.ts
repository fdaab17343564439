/**
 * What a tool prints reaches a terminal as text, never as control: every
 * tier relays tool output through forwardToolOutput (the worker tier's
 * threads, the process and sandbox tiers' children, each on the host).
 * The sandbox end to end: test/sandbox/walls.test.ts.
 */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { escapeControls, forwardToolOutput } from '../src/isolation/worker/tool-output.ts';

function relay(chunks: string[]): Promise<string> {
  const source = new PassThrough();
  let out = '';
  const target = new Writable({ write: (chunk, _encoding, done) => ((out += chunk.toString()), done()) });
  forwardToolOutput(source, '[tool] ', target);
  for (const chunk of chunks) source.write(chunk);
  source.end();
  return new Promise((resolve) => source.on('end', () => setImmediate(() => resolve(out))));
}

describe('tool output on its way to a terminal', () => {
  test('a carriage return and erase-line cannot remove the [tool] mark; OSC 52 and title sequences arrive inert', async () => {
    const out = await relay([
      'ok\r\x1b[2Ktoolpool: forged host line\n',
      '\x1b]52;c;aHVudGVyMg==\x07\x1b]0;pwned\x07',
      '\u009b2J tail',
    ]);
    expect(out).toBe(
      '[tool] ok\\x0d\\x1b[2Ktoolpool: forged host line\n[tool] \\x1b]52;c;aHVudGVyMg==\\x07\\x1b]0;pwned\\x07\\x9b2J tail\n',
    );
    expect(out.replace(/\n/g, '')).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });

  test('C0 (but tab), DEL, C1 and bidirectional overrides become visible escapes; other text is unchanged', () => {
    expect(escapeControls('a\tb\r\x1b[2K\x07\x7f\u009b\u202e\u2066 ünïcödé \\x1b')).toBe(
      'a\tb\\x0d\\x1b[2K\\x07\\x7f\\x9b\\u202e\\u2066 ünïcödé \\x1b',
    );
  });
});
