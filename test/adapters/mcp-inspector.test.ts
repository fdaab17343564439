import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { bin, exited, root, startServe, waitForLine } from '../support/mcp-serve.ts';

// The MCP Inspector is a second MCP client, independent of the SDK client the other tests use.
// @modelcontextprotocol/inspector 2 declares engines node >=22.19 and does not run on older lines.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const unsupportedNode = major < 22 || (major === 22 && minor < 19);
const inspector = join(root, 'node_modules', '.bin', 'mcp-inspector');

interface Run {
  code: number | null;
  json: Record<string, unknown>;
}

/** `mcp-inspector --cli <target...> <options...>`; it prints the method's result as JSON on stdout. */
function inspect(target: string[], options: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [inspector, '--cli', ...target, ...options],
      { cwd: root, timeout: 60_000 },
      (error, stdout, stderr) => {
        try {
          resolve({
            code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
            json: JSON.parse(stdout) as Record<string, unknown>,
          });
        } catch {
          reject(new Error(`mcp-inspector printed no JSON (${error?.message}): ${stdout}${stderr}`));
        }
      },
    );
  });
}

const stdioServer = [process.execPath, bin, 'serve', '--tools', 'tools/calculator.ts', '--tools', 'tools/flaky.ts'];

describe.skipIf(unsupportedNode)('the MCP Inspector CLI against toolpool serve', () => {
  test('over stdio: tools/list shows the tools with their titles', async () => {
    const { code, json } = await inspect(stdioServer, ['--method', 'tools/list']);
    expect(code).toBe(0);
    expect(json.tools).toEqual([
      expect.objectContaining({
        name: 'calculator',
        title: 'Calculator',
        inputSchema: expect.objectContaining({ required: ['expression'] }),
      }),
      expect.objectContaining({ name: 'flaky', title: 'Flaky service' }),
    ]);
  });

  test('over stdio: tools/call runs the tool; a crash is an isError result', async () => {
    const ok = await inspect(stdioServer, [
      '--method',
      'tools/call',
      '--tool-name',
      'calculator',
      '--tool-arg',
      'expression=7 / 3',
      'precision=2',
    ]);
    expect(ok.json).toEqual({ content: [{ type: 'text', text: '7 / 3 = 2.33' }], isError: false });
    const crash = await inspect(stdioServer, [
      '--method',
      'tools/call',
      '--tool-name',
      'flaky',
      '--tool-arg',
      'mode=crash',
    ]);
    expect(crash.json).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('Tool crashed') }],
    });
  });

  test('over Streamable HTTP: tools/list and tools/call', async () => {
    const server = startServe(['--http', '0', '--tools', 'tools/calculator.ts']);
    try {
      const url = await waitForLine(server, /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      const list = await inspect([url], ['--method', 'tools/list']);
      expect((list.json.tools as Array<{ name: string }>).map((tool) => tool.name)).toEqual(['calculator']);
      const call = await inspect(
        [url],
        ['--method', 'tools/call', '--tool-name', 'calculator', '--tool-arg', 'expression=6 * 7'],
      );
      expect(call.json).toEqual({ content: [{ type: 'text', text: '6 * 7 = 42' }], isError: false });
    } finally {
      server.kill('SIGTERM');
      await exited(server);
    }
  });
});
