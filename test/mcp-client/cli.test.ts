/**
 * `toolpool run` and `toolpool serve` with `--mcp-config FILE`, a
 * Claude Desktop-style `{ "mcpServers": ... }` file with toolpool's
 * `isolation`/`permissions` keys: run gives the agent the servers' tools;
 * serve re-exposes them, caged, to an MCP client.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { bin, root, serveOverStdio } from '../support/mcp-serve.ts';
import { MCP_SERVER, stdioServer } from '../support/mcp-servers.ts';
import {
  openaiChunks as c,
  openaiTextReply,
  startOpenAIWireServer,
  type OpenAIWireServer,
} from '../support/openai-wire-server.ts';

// Each test runs the CLI (TypeScript through tsx, tools compiled on start) and gives it 60 s; with a CPU burner
// beside the suite a run took over the default 30 s. The failures these tests catch are not slow ones.
vi.setConfig({ testTimeout: 120_000 });

const scratch = mkdtempSync(join(tmpdir(), 'toolpool-mcp-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A config file as Claude Desktop writes one, with the sandbox's fsRead added (a VS Code-style "type" too). */
function configFile(servers: Record<string, unknown>): string {
  const file = join(scratch, `mcp-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

const sandboxed = () => {
  const { command, args, permissions } = stdioServer();
  return { type: 'stdio', command, args, env: { GREETING: 'hi' }, permissions };
};

function toolpool(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('toolpool run --mcp-config', () => {
  let model: OpenAIWireServer;
  beforeAll(async () => {
    model = await startOpenAIWireServer();
  });
  afterAll(() => model.close());

  test("the agent gets the servers' tools, which run caged", async () => {
    model.enqueue(
      {
        kind: 'stream',
        chunks: [
          c.role(),
          c.toolCallStart(0, 'call_1', 'files_read'),
          c.toolCallArgs(0, '{"path": "/etc/passwd"}'),
          c.finish('tool_calls'),
          c.usage(10, 5),
        ],
      },
      openaiTextReply(['It cannot see that file.']),
    );
    const config = configFile({ files: sandboxed() });
    const { code, stdout, stderr } = await toolpool([
      'run',
      '--mcp-config',
      config,
      '--model',
      'openai:gpt-test',
      '--base-url',
      model.origin,
      'Read /etc/passwd',
    ]);
    expect(stderr).toMatch(/✓ files_read#1/);
    expect(code).toBe(0);
    expect(stdout).toBe('It cannot see that file.\n');
    const first = model.requests.at(-2)!.body as { tools: Array<{ function: { name: string } }> };
    expect(first.tools.map((tool) => tool.function.name)).toEqual(
      expect.arrayContaining(['files_echo', 'files_env', 'files_read']),
    );
    const second = model.requests.at(-1)!.body as { messages: Array<Record<string, unknown>> };
    // The sandbox has no /etc/passwd of the host's.
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'failed: ENOENT' });
  });

  test('a misspelt key in the file is named with the known ones; a file of another shape says which shape', async () => {
    const misspelt = await toolpool([
      'run',
      '--mcp-config',
      configFile({ files: { command: process.execPath, arg: [MCP_SERVER] } }),
      '--model',
      'openai:gpt-test',
      '--base-url',
      model.origin,
      'hi',
    ]);
    expect(misspelt.code).toBe(1);
    expect(misspelt.stderr).toMatch(
      /^toolpool: --mcp-config .*\.json: unknown option "mcpServers\.files\.arg"; did you mean "mcpServers\.files\.args"\? the known options of mcpServers\.files are command, args, env/,
    );
    const other = join(scratch, 'servers.json');
    writeFileSync(other, JSON.stringify({ servers: {} }));
    const shape = await toolpool([
      'run',
      '--mcp-config',
      other,
      '--model',
      'openai:gpt-test',
      '--base-url',
      model.origin,
      'hi',
    ]);
    expect(shape.code).toBe(1);
    expect(shape.stderr).toMatch(
      /^toolpool: --mcp-config .*servers\.json: expected \{ "mcpServers": \{ "<name>": \{ "command": \.\.\./,
    );
  });
});

describe('toolpool serve --mcp-config', () => {
  test("re-exposes the caged servers' tools to an MCP client: schemas, calls, progress, errors", async () => {
    const served = await serveOverStdio([
      '--mcp-config',
      configFile({ files: sandboxed(), plain: { ...stdioServer({ isolation: 'process' }) } }),
    ]);
    try {
      const { tools } = await served.client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['files_echo', 'files_progress', 'files_sum', 'plain_echo']));
      expect(tools.find((tool) => tool.name === 'files_sum')?.outputSchema).toMatchObject({
        type: 'object',
        properties: { sum: { type: 'number' } },
      });

      // What arrives on the wire, in order (the SDK client itself would drop a progress notification that comes
      // in one chunk with its result: it runs notification handlers a microtask after responses).
      const wire: string[] = [];
      const transport = served.client.transport!;
      const deliver = transport.onmessage!;
      transport.onmessage = (message, extra) => {
        if ('method' in message && message.method === 'notifications/progress')
          wire.push(`progress ${(message.params as { progress: number }).progress}`);
        else if ('result' in message && (message.result as { content?: unknown }).content) wire.push('result');
        deliver(message, extra);
      };
      const result = await served.client.request(
        {
          method: 'tools/call',
          params: { name: 'files_progress', arguments: { steps: 3 }, _meta: { progressToken: 'p1' } },
        },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'done after 3 steps' }]);
      expect(wire).toEqual(['progress 1', 'progress 2', 'progress 3', 'result']);

      const sum = await served.client.callTool({ name: 'files_sum', arguments: { a: 2, b: 3 } });
      expect(sum.structuredContent).toEqual({ sum: 5 });
      const invalid = await served.client.callTool({ name: 'plain_echo', arguments: { text: 'UPPER' } });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toMatch(/Validation failed for tool \\"plain_echo\\"/);
      const failed = await served.client.callTool({ name: 'files_fail', arguments: { why: 'caged' } });
      expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'it failed: caged' }] });
    } finally {
      await served.close();
    }
  });
});
