import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { fixture, exampleTool } from './support/executors.ts';
import { runCommand } from '../src/cli/run.ts';
import { anthropicEvents as a, startAnthropicWireServer } from './support/anthropic-wire-server.ts';
import {
  openaiChunks as c,
  openaiTextReply,
  startOpenAIWireServer,
  type OpenAIWireServer,
} from './support/openai-wire-server.ts';

// Each test runs the CLI (TypeScript through tsx, tools compiled on start) and gives it 60 s; with a CPU burner
// beside the suite a run took over the default 30 s. The failures these tests catch are not slow ones.
vi.setConfig({ testTimeout: 120_000 });

const bin = fileURLToPath(new URL('../bin/toolpool.js', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/toolpool.js ...args` as a child process, without provider keys unless given. */
function toolpool(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']) if (!(key in env)) delete childEnv[key];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: root, env: childEnv, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** An Output that keeps what was written, and lets a test react to each write. */
function captured() {
  const output = {
    text: '',
    isTTY: false,
    onWrite: undefined as ((text: string) => void) | undefined,
    write(text: string) {
      output.text += text;
      output.onWrite?.(text);
      return true;
    },
  };
  return output;
}

/** A one-line error: `toolpool: ...`, optionally a usage hint, and no stack trace. */
function expectCleanError(stderr: string): void {
  const lines = stderr.trim().split('\n');
  expect(lines[0]).toMatch(/^toolpool: /);
  expect(lines.length).toBeLessThanOrEqual(2);
  expect(stderr).not.toMatch(/^\s+at /m);
}

describe('toolpool demo', () => {
  test('exits 0 and shows every tool call ending, plain progress lines, and the summary', async () => {
    const { code, stdout, stderr } = await toolpool(['demo']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    // Three hashes ran in parallel, each reporting progress (stdout is a pipe: plain lines).
    for (const label of ['hash#1', 'hash#2', 'hash#3']) {
      expect(stdout).toMatch(new RegExp(`✓ ${label} .*[0-9a-f]{64}`));
      expect(stdout).toContain(`… ${label} 100%`);
    }
    // The validation error is shown whole: each wrong field on its line, then the value received.
    expect(stdout).toMatch(
      /✗ calculator#4 .*Validation failed for tool "calculator":\n {28}- precision: must be an integer \(got "two"\)\n {26}Received arguments: \{"expression":"\(1 \+ 2\) \* 3 \/ 7","precision":"two"\}\n/,
    );
    expect(stdout).toMatch(/✗ read_file#5 .*Blocked by the host's policy/);
    expect(stdout).toMatch(/✗ flaky#6 .*Tool crashed: its worker exited with code 1/);
    // The model reacted to the validation error and the blocked call.
    expect(stdout).toMatch(/✓ calculator#7 .*= 1\.29/);
    expect(stdout).toMatch(/✓ read_file#8 .*"name": "toolpool"/);
    expect(stdout).toMatch(/model Stretched digests: .*Total: \(1 \+ 2\) \* 3 \/ 7 = 1\.29/);
    // The write needs approval: the run pauses, the demo approves visibly, a restored agent resumes.
    expect(stdout).toMatch(/⏸ write_file#9 needs approval \{"path":"summary\.md"/);
    expect(stdout).toMatch(
      /demo: approving write_file on its own \(toolpool run asks you y\/n here\); the paused agent went through a .* JSON snapshot into a new Agent/,
    );
    expect(stdout).toMatch(/── turn 3, after approval ──\n▸ write_file#9/);
    expect(stdout).toMatch(/✓ write_file#9 .*Wrote \d+ bytes to summary\.md/);
    expect(stdout).toMatch(/model Saved: Wrote \d+ bytes to summary\.md/);
    expect(stdout).toContain('Summary');
    expect(stdout).toMatch(/4 model turn\(s\), 9 tool call\(s\): 6 ok, 3 error; ended: stop/);
    expect(stdout).toMatch(/turn 1: 6 call\(s\) in .* wall/);
    // No colour codes or cursor moves when stdout is not a terminal.
    expect(stdout).not.toContain('\x1b[');
  });
});

describe('toolpool --help', () => {
  test.each([
    [['--help'], /Usage: toolpool <command>[\s\S]*demo[\s\S]*run/],
    [['demo', '--help'], /Usage: toolpool demo/],
    [['run', '--help'], /Usage: toolpool run --model <provider:model>[\s\S]*--base-url[\s\S]*OPENAI_API_KEY/],
    [['help', 'run'], /Usage: toolpool run/],
  ])('%j prints usage and exits 0', async (args, pattern) => {
    const { code, stdout } = await toolpool(args);
    expect(code).toBe(0);
    expect(stdout).toMatch(pattern);
  });

  test('an unknown command or flag is a usage error (exit 2)', async () => {
    const unknown = await toolpool(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^toolpool: unknown command "frobnicate"/);
    const flag = await toolpool(['run', '--frob']);
    expect(flag.code).toBe(2);
    expectCleanError(flag.stderr);
    expect(flag.stderr).toMatch(/^toolpool: unknown option --frob; the options are --help, --model, --tools, /);
  });
});

describe('toolpool run: errors found before any request', () => {
  test('a missing key is a one-line error (exit 1)', async () => {
    const { code, stdout, stderr } = await toolpool(['run', '--model', 'openai:gpt-4o-mini', 'hi']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      'toolpool: OPENAI_API_KEY is not set. Export it, or pass --base-url to use a local server that needs no key.\n',
    );
    const anthropic = await toolpool(['run', '--model', 'anthropic:claude-x', 'hi']);
    expect(anthropic.code).toBe(1);
    expect(anthropic.stderr).toMatch(/^toolpool: ANTHROPIC_API_KEY is not set/);
  });

  test('an unknown provider or a malformed --model is a usage error (exit 2)', async () => {
    const unknown = await toolpool(['run', '--model', 'gemini:pro', 'hi']);
    expect(unknown.code).toBe(2);
    expectCleanError(unknown.stderr);
    expect(unknown.stderr).toMatch(/unknown provider "gemini"; use one of: openai:<model>, anthropic:<model>/);
    const malformed = await toolpool(['run', '--model', 'gpt-4o', 'hi']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--model must be <provider>:<model>/);
    const noPrompt = await toolpool(['run', '--model', 'openai:gpt-4o']);
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.stderr).toMatch(/missing the prompt/);
  });
});

// These share one scripted server, whose responses are taken in order: one at a time.
describe('toolpool run', () => {
  let server: OpenAIWireServer;
  beforeAll(async () => {
    server = await startOpenAIWireServer();
  });
  afterAll(async () => {
    await server.close();
  });

  test('against a local OpenAI-format server: a tool call, then the final answer; no key needed with --base-url', async () => {
    server.enqueue(
      {
        kind: 'stream',
        chunks: [
          c.role(),
          c.toolCallStart(0, 'call_abc', 'calculator'),
          c.toolCallArgs(0, '{"expre'),
          c.toolCallArgs(0, 'ssion": "6'),
          c.toolCallArgs(0, ' * 7"}'),
          c.finish('tool_calls'),
          c.usage(40, 12),
        ],
      },
      openaiTextReply(['The answer ', 'is 42.']),
    );
    const { code, stdout, stderr } = await toolpool([
      'run',
      '--tools',
      exampleTool('calculator.ts'),
      '--model',
      'openai:gpt-test',
      '--base-url',
      `${server.origin}/v1`,
      '--system',
      'Use the calculator.',
      'What is 6 * 7?',
    ]);

    expect(code).toBe(0);
    expect(stdout).toBe('The answer is 42.\n');
    expect(stderr).toMatch(/you\s+What is 6 \* 7\?/);
    expect(stderr).toMatch(/▸ calculator#1 \{"expression":"6 \* 7"\}/);
    expect(stderr).toMatch(/✓ calculator#1 .*6 \* 7 = 42/);
    expect(stderr).toMatch(/model The answer is 42\./);
    expect(stderr).toMatch(/2 model turn\(s\), 1 tool call\(s\): 1 ok, 0 error; ended: stop/);

    expect(server.requests).toHaveLength(2);
    const first = server.requests[0]!.body as {
      model: string;
      messages: Array<Record<string, unknown>>;
      tools: Array<{ function: { name: string } }>;
    };
    expect(first.model).toBe('gpt-test');
    expect(first.messages[0]).toEqual({ role: 'system', content: 'Use the calculator.' });
    expect(first.tools.map((t) => t.function.name)).toEqual(['calculator']);
    const second = server.requests[1]!.body as { messages: Array<Record<string, unknown>> };
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_abc', content: '6 * 7 = 42' });
  });

  test('a folder given to --tools loads every tool module in it', async () => {
    server.enqueue(openaiTextReply(['No tools needed.']));
    const { code, stdout } = await toolpool([
      'run',
      '--tools',
      'tools',
      '--model',
      'openai:gpt-test',
      '--base-url',
      server.origin,
      'hi',
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe('No tools needed.\n');
    const body = server.requests.at(-1)!.body as { tools: Array<{ function: { name: string } }> };
    expect(body.tools.map((t) => t.function.name).sort()).toEqual([
      'calculator',
      'flaky',
      'hash',
      'read_file',
      'write_file',
    ]);
  });

  test('a helper in a --tools folder (no tool default export) does not stop the run: it is skipped and said once on stderr', async () => {
    server.enqueue(openaiTextReply(['Fine.']));
    const { code, stdout, stderr } = await toolpool([
      'run',
      '--tools',
      fixture('tool-folder'),
      '--model',
      'openai:gpt-test',
      '--base-url',
      server.origin,
      'hi',
    ]);
    expect(code).toBe(0);
    expect(stdout).toBe('Fine.\n');
    expect(
      stderr.match(
        /skipped 1 module\(s\) of a tools folder whose default export is not a tool \(helpers\?\): .*helpers\.ts/g,
      ),
    ).toHaveLength(1);
    const body = server.requests.at(-1)!.body as { tools: Array<{ function: { name: string } }> };
    expect(body.tools.map((t) => t.function.name)).toEqual(['alpha', 'beta']);
  });

  test('a tool module that fails to load is a one-line error naming the module (exit 1)', async () => {
    const { code, stderr } = await toolpool([
      'run',
      '--tools',
      fixture('throws-on-load.mjs'),
      '--model',
      'openai:gpt-test',
      '--base-url',
      server.origin,
      'hi',
    ]);
    expect(code).toBe(1);
    expectCleanError(stderr);
    expect(stderr).toMatch(/Tool module .*throws-on-load\.mjs failed to load/);
    const missing = await toolpool([
      'run',
      '--tools',
      'no/such/tool.ts',
      '--model',
      'openai:gpt-test',
      '--base-url',
      server.origin,
      'hi',
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('toolpool: --tools no/such/tool.ts: no such file or folder\n');
  });

  /** The model asks to write a file (write_file needs approval), then answers with what the tool said. */
  function enqueueWrite(id: string, answer = true) {
    server.enqueue({
      kind: 'stream',
      chunks: [
        c.role(),
        c.toolCallStart(0, id, 'write_file'),
        c.toolCallArgs(0, '{"path": "note.txt", "text": "hi"}'),
        c.finish('tool_calls'),
      ],
    });
    if (answer) server.enqueue(openaiTextReply(['Handled.']));
  }

  test('a call that needs approval, without a terminal on stdin: the pending calls are printed and the exit code is 3', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'toolpool-cli-'));
    try {
      enqueueWrite('call_w1', false);
      const before = server.requests.length;
      const { code, stdout, stderr } = await toolpool([
        'run',
        '--tools',
        exampleTool('write-file.ts'),
        '--tool-options',
        JSON.stringify({ root: scratch }),
        '--model',
        'openai:gpt-test',
        '--base-url',
        server.origin,
        'write a note',
      ]);
      expect(code).toBe(3);
      expect(stdout).toBe('');
      expect(stderr).toMatch(/⏸ write_file#1 needs approval \{"path":"note\.txt","text":"hi"\}/);
      expect(stderr).toMatch(
        /toolpool: the run stopped because these tool calls need approval, and stdin is not a terminal to ask on:\n {2}write_file#1 \(call_w1\) \{"path":"note\.txt","text":"hi"\}\n/,
      );
      expect(existsSync(join(scratch, 'note.txt'))).toBe(false);
      expect(server.requests.length - before).toBe(1);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  test.each([
    ['y', true, 'Wrote 2 bytes to note.txt.'],
    ['n', false, 'Not run: a person rejected this call of "write_file" (The user declined it at the terminal.).'],
  ])(
    'on a terminal, each call is shown with its arguments and asked y/n (answer %s)',
    async (answer, written, resultText) => {
      const scratch = await mkdtemp(join(tmpdir(), 'toolpool-cli-'));
      try {
        enqueueWrite(`call_${answer}`);
        const stdin = Object.assign(new PassThrough(), { isTTY: true });
        const stderr = captured();
        stderr.onWrite = (text) => {
          if (text.includes('approve? [y/N]')) stdin.write(`${answer}\n`);
        };
        const stdout = captured();
        const code = await runCommand(
          [
            '--tools',
            exampleTool('write-file.ts'),
            '--tool-options',
            JSON.stringify({ root: scratch }),
            '--model',
            'openai:gpt-test',
            '--base-url',
            server.origin,
            'write a note',
          ],
          { stdout, stderr, env: {}, stdin },
        );
        expect(code).toBe(0);
        expect(stderr.text).toMatch(
          /\? write_file#1 \(call_[yn]\) \{"path":"note\.txt","text":"hi"\}\n {2}approve\? \[y\/N\] /,
        );
        expect(existsSync(join(scratch, 'note.txt'))).toBe(written);
        const toolMessage = (
          server.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }
        ).messages.at(-1);
        expect(toolMessage).toMatchObject({ role: 'tool', content: resultText });
        expect(stdout.text).toBe('Handled.\n');
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  );

  test('Ctrl-C while the question is open: nothing runs, the paused calls are answered, exit 130', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'toolpool-cli-'));
    try {
      enqueueWrite('call_int', false);
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const stderr = captured();
      // process.emit calls the SIGINT listeners without sending a real signal to the test runner.
      stderr.onWrite = (text) => void (text.includes('approve? [y/N]') && setImmediate(() => process.emit('SIGINT')));
      const code = await runCommand(
        [
          '--tools',
          exampleTool('write-file.ts'),
          '--tool-options',
          JSON.stringify({ root: scratch }),
          '--model',
          'openai:gpt-test',
          '--base-url',
          server.origin,
          'write a note',
        ],
        { stdout: captured(), stderr, env: {}, stdin },
      );
      expect(code).toBe(130);
      expect(existsSync(join(scratch, 'note.txt'))).toBe(false);
      expect(stderr.text).toMatch(/aborting\.\.\./);
      expect(stderr.text).toMatch(/✗ write_file#1 .*Not run: the run was aborted\./);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  test('a JavaScript tool with a syntax error names file, line and column; TOOLPOOL_DEBUG=1 adds the line and the stack', async () => {
    const args = [
      'run',
      '--tools',
      fixture('syntax-error.mjs'),
      '--model',
      'openai:gpt-test',
      '--base-url',
      server.origin,
      'hi',
    ];
    const plain = await toolpool(args);
    expect(plain.code).toBe(1);
    expectCleanError(plain.stderr);
    expect(plain.stderr).toMatch(/syntax-error\.mjs failed to load: .*\(syntax error at .*syntax-error\.mjs:3:8\)\n$/);
    const debug = await toolpool(args, { TOOLPOOL_DEBUG: '1' });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toContain('  3 |   this is not javascript\n    |        ^\n');
    expect(debug.stderr).toMatch(/^\s+at .*registry/m);
  });

  test('an unreachable server is a one-line error (exit 1)', async () => {
    const closed = await startOpenAIWireServer();
    const origin = closed.origin;
    await closed.close();
    const { code, stderr } = await toolpool(['run', '--model', 'openai:gpt-test', '--base-url', origin, 'hi']);
    expect(code).toBe(1);
    expectCleanError(
      stderr
        .split('\n')
        .filter((line) => line.startsWith('toolpool:'))
        .join('\n'),
    );
    expect(stderr).toMatch(/^toolpool: The server at .* could not be reached/m);
  });
});

describe('toolpool run --model anthropic:...', () => {
  test('against a local Anthropic-format server: tool_use, then the final answer', async () => {
    const server = await startAnthropicWireServer();
    try {
      server.enqueue(
        {
          kind: 'stream',
          events: [
            a.messageStart(30),
            a.toolUseStart(0, 'toolu_1', 'calculator'),
            a.inputJson(0, '{"expression'),
            a.inputJson(0, '": "2 ^ 10"}'),
            a.blockStop(0),
            a.messageDelta('tool_use', 9),
            a.messageStop(),
          ],
        },
        {
          kind: 'stream',
          events: [
            a.messageStart(50),
            a.textStart(0),
            a.text(0, '2^10 is '),
            a.text(0, '1024.'),
            a.blockStop(0),
            a.messageDelta('end_turn', 4),
            a.messageStop(),
          ],
        },
      );
      const { code, stdout, stderr } = await toolpool([
        'run',
        '-t',
        exampleTool('calculator.ts'),
        '-m',
        'anthropic:claude-test',
        '--base-url',
        `${server.origin}/v1`,
        '2^10?',
      ]);
      expect(stderr).toMatch(/✓ calculator#1 .*2 \^ 10 = 1024/);
      expect(code).toBe(0);
      expect(stdout).toBe('2^10 is 1024.\n');
      const second = server.requests[1]!.body as { messages: Array<{ role: string; content: unknown }> };
      expect(second.messages.at(-1)).toMatchObject({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }],
      });
    } finally {
      await server.close();
    }
  });
});
