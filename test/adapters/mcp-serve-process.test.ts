import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { eventually } from '../support/leaks.ts';
import {
  childrenOf,
  exited,
  isAlive,
  response,
  sendLine,
  SERVED_TOOLS,
  startServe,
  stderrEnded,
  waitForLine,
  type ServeChild,
} from '../support/mcp-serve.ts';

// These tests speak JSON-RPC lines to `toolpool serve` themselves instead of
// using the SDK client, so they see the exact order on the wire and how the
// process ends when nobody kills it.

// Each test starts `toolpool serve` processes (a TypeScript CLI that compiles its tools): with a CPU burner beside
// the suite, two starts took over the default 30 s. The failures these tests catch (a hang, a wrong exit) are not slow.
vi.setConfig({ testTimeout: 120_000 });

const started: ServeChild[] = [];
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function serve(args: string[]): ServeChild {
  const child = startServe(args);
  started.push(child);
  return child;
}

async function initialize(child: ServeChild): Promise<void> {
  sendLine(child, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
  });
  await response(child, 1);
  sendLine(child, { jsonrpc: '2.0', method: 'notifications/initialized' });
}

function callTool(child: ServeChild, id: number, name: string, args: object, progressToken?: string): void {
  sendLine(child, {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(progressToken !== undefined ? { _meta: { progressToken } } : {}) },
  });
}

/** Every stdout line the child writes, parsed. */
function stdoutMessages(child: ServeChild): Array<Record<string, unknown>> {
  const messages: Array<Record<string, unknown>> = [];
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) if (line.trim()) messages.push(JSON.parse(line) as Record<string, unknown>);
  });
  return messages;
}

describe('toolpool serve over stdio, on the wire', () => {
  test('every progress notification is written before the result, with the percent as progress of a total of 100 and the update text', async () => {
    const child = serve(['--tools', 'tools/hash.ts']);
    const messages = stdoutMessages(child);
    await initialize(child);
    callTool(child, 2, 'hash', { text: 'x', rounds: 50_000, progressSteps: 4 }, 'tok');
    await response(child, 2);
    const forCall = messages.filter((m) => m.id === 2 || m.method === 'notifications/progress');
    expect(
      forCall.map((m) => (m.id === 2 ? 'result' : (m.params as { progress: number; message: string }).message)),
    ).toEqual(['25%', '50%', '75%', '100%', 'result']);
    expect(forCall.slice(0, 4).map((m) => m.params)).toEqual(
      [25, 50, 75, 100].map((progress) => expect.objectContaining({ progressToken: 'tok', progress, total: 100 })),
    );
    child.stdin!.end();
    expect(await exited(child)).toEqual({ code: 0, signal: null });
  });

  test('stdout carries only the protocol: logs go to stderr', async () => {
    const child = serve(['--tools', 'tools/calculator.ts']);
    const messages = stdoutMessages(child);
    await initialize(child);
    callTool(child, 2, 'calculator', { expression: '1 + 1' });
    await response(child, 2);
    child.stdin!.end();
    await exited(child);
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(child.stderrText).toMatch(/toolpool serve: 1 tool\(s\) \(calculator\) on stdio/);
    expect(child.stderrText).toMatch(/toolpool serve: ✓ calculator \d+ ms/);
  });
});

describe('toolpool serve stops cleanly', () => {
  // The worker tier has threads only (perhaps esbuild's service process as a child); the process tier has children.
  test.each(['worker', 'process'])(
    '%s tier: when stdin closes it exits by itself (code 0) and leaves no child process',
    async (tier) => {
      const child = serve(['--tools', 'tools/hash.ts', '--isolation', tier]);
      await initialize(child);
      callTool(child, 2, 'hash', { text: 'x', rounds: 10 });
      expect(await response(child, 2)).toMatchObject({ result: { isError: false } });
      const children = childrenOf(child.pid!);
      if (tier === 'process') expect(children.length).toBeGreaterThan(0);
      child.stdin!.end();
      expect(await exited(child)).toEqual({ code: 0, signal: null });
      // bin/toolpool.js forces an exit 2 s after main() returns should a handle remain, and says so; this one needed none.
      await stderrEnded(child);
      expect(child.stderrText).not.toContain('still held the process');
      expect(child.stderrText).toContain('stopping: stdin closed');
      expect(
        await eventually(
          () => children.filter(isAlive),
          (alive) => alive.length === 0,
        ),
      ).toEqual([]);
    },
  );

  test.each(['worker', 'process'])(
    '%s tier: on SIGTERM during a busy loop it kills the loop, exits 0 and leaves no child process',
    async (tier) => {
      const child = serve([...SERVED_TOOLS, '--isolation', tier]);
      const messages = stdoutMessages(child);
      await initialize(child);
      callTool(child, 2, 'spin', {}, 'p');
      // Its "spinning" update says the loop is running.
      await eventually(() => messages.some((m) => m.method === 'notifications/progress'), Boolean, 20_000);
      const children = childrenOf(child.pid!);
      if (tier === 'process') expect(children.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      expect(await exited(child)).toEqual({ code: 0, signal: null });
      expect(child.stderrText).toContain('stopping: SIGTERM');
      expect(
        await eventually(
          () => children.filter(isAlive),
          (alive) => alive.length === 0,
        ),
      ).toEqual([]);
    },
  );

  test('over HTTP, on SIGINT it exits 0', async () => {
    const child = serve(['--tools', 'tools/calculator.ts', '--http', '0']);
    await waitForLine(child, /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    child.kill('SIGINT');
    expect(await exited(child)).toEqual({ code: 0, signal: null });
    expect(child.stderrText).toContain('stopping: SIGINT');
  });
});

describe('toolpool serve --http refuses what is not a local MCP client', () => {
  test('another path is 404; a foreign Host or Origin is 403 (DNS rebinding)', async () => {
    const child = serve(['--tools', 'tools/calculator.ts', '--http', '0']);
    const url = await waitForLine(child, /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const post = (target: string, headers: Record<string, string> = {}) =>
      fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(init),
      });
    expect((await post(url.replace('/mcp', '/other'))).status).toBe(404);
    const evilOrigin = await post(url, { origin: 'http://evil.example' });
    expect(evilOrigin.status).toBe(403);
    expect(((await evilOrigin.json()) as { error: { message: string } }).error.message).toContain(
      'Origin "http://evil.example" is not a local page',
    );
    // fetch() will not send another Host header; node:http will.
    expect(await statusWithHost(url, 'evil.example')).toBe(403);
    expect((await post(url, { 'mcp-session-id': 'no-such-session' })).status).toBe(404);
    expect((await post(url)).status).toBe(200);
    child.kill('SIGTERM');
    await exited(child);
  });
});

function statusWithHost(url: string, host: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method: 'POST', headers: { host, 'content-type': 'application/json' } },
      (incoming) => {
        incoming.resume();
        resolve(incoming.statusCode);
      },
    );
    outgoing.on('error', reject);
    outgoing.end('{}');
  });
}

describe('toolpool serve usage', () => {
  async function run(args: string[]) {
    const child = serve(args);
    child.stdin!.end();
    let stdout = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const { code } = await exited(child);
    return { code, stdout, stderr: child.stderrText };
  }

  test('--help prints usage; no --tools or a bad --http is a usage error (exit 2)', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /Usage: toolpool serve \(--tools <file\|folder>\.\.\. \| --mcp-config <file>\)[\s\S]*--http <port>[\s\S]*--isolation/,
    );
    for (const flag of [
      '--timeout <ms>',
      '--memory <mb>',
      '--allow-net [host:port]',
      '--env <NAME[=VALUE]>',
      'TOOLPOOL_DEBUG=1',
    ])
      expect(help.stdout).toContain(flag);
    const noTools = await run([]);
    expect(noTools.code).toBe(2);
    expect(noTools.stderr).toMatch(/^toolpool: missing --tools/);
    const badPort = await run(['--tools', 'tools/calculator.ts', '--http', '99999']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--http must be a port number/);
  });

  test('a port already in use is a one-line error (exit 1), and the process exits at once', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const child = serve(['--tools', 'tools/calculator.ts', '--http', String(port)]);
      const line = await waitForLine(child, /^(toolpool: .*)$/m).catch(() => child.stderrText);
      const { code } = await exited(child);
      expect(code).toBe(1);
      expect(line).toMatch(
        new RegExp(`^toolpool: --http ${port}: cannot listen on 127\\.0\\.0\\.1:${port} \\(.*EADDRINUSE`),
      );
      // bin/toolpool.js forces an exit 2 s after main() returns should a handle remain, and says so; this one needed none.
      await stderrEnded(child);
      expect(child.stderrText).not.toContain('still held the process');
    } finally {
      taken.close();
    }
  });

  test('--isolation is passed to the executor, which names the tiers it has when one is unknown (exit 1)', async () => {
    const bad = await run(['--tools', 'tools/calculator.ts', '--isolation', 'moon']);
    expect(bad.code).toBe(1);
    // The executor's own check, worded for the flag the user typed.
    expect(bad.stderr).toMatch(/^toolpool: --isolation must be .*"worker"/);
  });
});

describe('toolpool serve --allow-read / --allow-write', () => {
  test('tools run under the permission model: only the given paths can be read or written', async () => {
    const readable = await mkdtemp(join(tmpdir(), 'toolpool-read-'));
    const writable = await mkdtemp(join(tmpdir(), 'toolpool-write-'));
    try {
      await writeFile(join(readable, 'note.txt'), 'hello from the readable folder');
      const child = serve([
        '--tools',
        'test/fixtures/hostile/read-file.ts',
        '--tools',
        'test/fixtures/hostile/write-file.ts',
        '--allow-read',
        readable,
        '--allow-write',
        writable,
      ]);
      await initialize(child);
      const calls: Array<[string, string]> = [
        ['read_any_file', join(readable, 'note.txt')],
        ['read_any_file', '/etc/passwd'],
        ['write_any_file', join(writable, 'out.txt')],
        ['write_any_file', join(readable, 'out.txt')],
      ];
      calls.forEach(([name, target], index) => callTool(child, index + 2, name, { target }));
      const results = await Promise.all(calls.map((_, index) => response(child, index + 2)));
      const outcome = results.map((r) => {
        const { isError, content } = r.result as { isError: boolean; content: Array<{ text: string }> };
        return `${isError ? 'error' : 'ok'}: ${content[0]!.text}`;
      });
      expect(outcome[0]).toBe('ok: hello from the readable folder');
      expect(outcome[1]).toMatch(/^error: .*(ERR_ACCESS_DENIED|restricted)/);
      expect(outcome[2]).toBe(`ok: wrote ${join(writable, 'out.txt')}`);
      expect(outcome[3]).toMatch(/^error: .*(ERR_ACCESS_DENIED|restricted)/);
      child.stdin!.end();
      expect(await exited(child)).toEqual({ code: 0, signal: null });
    } finally {
      await rm(readable, { recursive: true, force: true });
      await rm(writable, { recursive: true, force: true });
    }
  });
});

describe('toolpool serve: limits, env and network like the library options', () => {
  /** One tools/call on a fresh `toolpool serve` with these flags; the result's text and isError. */
  async function callOnce(args: string[], name: string, toolArgs: object, env: NodeJS.ProcessEnv = process.env) {
    const child = startServe(args, env);
    started.push(child);
    await initialize(child);
    callTool(child, 2, name, toolArgs);
    const { result } = (await response(child, 2)) as { result: { isError: boolean; content: Array<{ text: string }> } };
    child.stdin!.end();
    await exited(child);
    return { isError: result.isError, text: result.content.map((part) => part.text).join('') };
  }

  test('--env NAME copies a variable from the environment, NAME=VALUE sets one; others stay hidden', async () => {
    const env = { ...process.env, TOOLPOOL_TEST_COPIED: 'from the host', TOOLPOOL_TEST_HIDDEN: 'secret' };
    const flags = [
      '--tools',
      'test/fixtures/hostile/read-env.ts',
      '--env',
      'TOOLPOOL_TEST_COPIED',
      '--env',
      'GREETING=hello=world',
    ];
    expect(await callOnce(flags, 'read_env', { target: 'TOOLPOOL_TEST_COPIED' }, env)).toEqual({
      isError: false,
      text: 'from the host',
    });
    expect(await callOnce(flags, 'read_env', { target: 'GREETING' }, env)).toEqual({
      isError: false,
      text: 'hello=world',
    });
    expect(await callOnce(flags, 'read_env', { target: 'TOOLPOOL_TEST_HIDDEN' }, env)).toEqual({
      isError: false,
      text: '(unset)',
    });
  });

  test.each(['--timeout', '--timeout-ms'])('%s limits each call', async (flag) => {
    const { isError, text } = await callOnce(['--tools', 'test/fixtures/served/spin.ts', flag, '400'], 'spin', {});
    expect(isError).toBe(true);
    expect(text).toBe(
      'Tool timed out after 400 ms (limit timeoutMs); it ignored its signal and was killed after the grace period.',
    );
  });

  test("--memory caps a tool worker's heap", async () => {
    const { isError, text } = await callOnce(
      ['--tools', 'test/fixtures/hostile/heap-bomb.ts', '--memory', '32'],
      'heap_bomb',
      {},
    );
    expect(isError).toBe(true);
    expect(text).toBe('Tool reached its memory limit (maxMemoryMb: 32 MB) and was stopped.');
  });

  test('flag mistakes are usage errors naming the flag; a host:port --allow-net outside the sandbox tier says what it needs', async () => {
    const run = async (args: string[]) => {
      const child = startServe(args);
      started.push(child);
      child.stdin!.end();
      const { code } = await exited(child);
      return { code, stderr: child.stderrText };
    };
    expect(await run(['--tools', 'tools/calculator.ts', '--memory', '8'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^toolpool: --memory must be an integer >= 16, got "8"/),
    });
    expect(await run(['--tools', 'tools/calculator.ts', '--timeout', '5', '--timeout-ms', '5'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--timeout and --timeout-ms are the same option'),
    });
    expect(await run(['--tools', 'tools/calculator.ts', '--env', 'NO SPACES'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--env must be NAME or NAME=VALUE, got "NO SPACES"'),
    });
    expect(await run(['--tools', 'tools/calculator.ts', '--allow-net', 'api.example.com:443'])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('permissions.net lists hosts, which only isolation "sandbox" can enforce'),
    });
  });

  test('--allow-net alone (before another flag, or last) is accepted: it allows any host', async () => {
    for (const args of [
      ['--allow-net', '--tools', 'tools/calculator.ts'],
      ['--tools', 'tools/calculator.ts', '--allow-read', 'tools', '--allow-net'],
    ]) {
      expect(await callOnce(args, 'calculator', { expression: '2 + 2' })).toEqual({
        isError: false,
        text: '2 + 2 = 4',
      });
    }
  });

  test('TOOLPOOL_DEBUG=1 adds the stack of an error that stops it; without it the error is one line', async () => {
    const run = async (env: NodeJS.ProcessEnv) => {
      const child = startServe(['--tools', 'test/fixtures/throws-on-load.mjs'], env);
      started.push(child);
      child.stdin!.end();
      const { code } = await exited(child);
      return { code, stderr: child.stderrText };
    };
    const plain = await run({ ...process.env, TOOLPOOL_DEBUG: '' });
    expect(plain.code).toBe(1);
    expect(plain.stderr.trim().split('\n')).toHaveLength(1);
    const debug = await run({ ...process.env, TOOLPOOL_DEBUG: '1' });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^toolpool: .*throws-on-load\.mjs[\s\S]*\n\s+at /);
  });
});
