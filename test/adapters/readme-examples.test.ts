import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, test } from 'vitest';
import { createMcpServer } from '../../src/adapters/mcp/index.ts';
import deploy from '../../src/adapters/mcp/tool-metadata.examples.ts';
import { useExecutors } from '../support/executors.ts';
import { exited, root } from '../support/mcp-serve.ts';
import { startMachine } from '../support/queue-machines.ts';
import { startRedis } from '../support/redis-server.ts';
import { allDocsText } from '../support/docs-pages.ts';

// README.md and docs/*.md: the examples moved to the docs pages.
const readme = allDocsText();

/** The `// #region readme` part of an examples file, with its relative imports written as a user writes them. */
function quoted(file: string, subpath: string): string {
  const source = readFileSync(`${root}/${file}`, 'utf8');
  const region = /\/\/ #region readme\n([\s\S]*?)\/\/ #endregion/.exec(source)![1]!;
  return region.replaceAll("'../../index.ts'", "'toolpool'").replaceAll("'./index.ts'", `'toolpool/${subpath}'`);
}

// `ai` 7 declares engines node >=22; its example runs there only.
const unsupportedNode = Number(process.versions.node.split('.')[0]) < 22;

describe('README examples', () => {
  test.each([
    ['src/adapters/mcp/mcp.examples.ts', 'mcp'],
    ['src/adapters/mcp/tool-metadata.examples.ts', 'mcp'],
    ['src/adapters/ai-sdk/ai-sdk.examples.ts', 'ai-sdk'],
    ['src/adapters/ai-sdk/approval.examples.ts', 'ai-sdk'],
    ['src/adapters/bullmq/bullmq.examples.ts', 'bullmq'],
  ])('the README quotes %s as it is (and it has under 25 lines)', (file, subpath) => {
    const code = quoted(file, subpath);
    expect(readme).toContain(`\`\`\`ts\n${code}\`\`\``);
    expect(code.trimEnd().split('\n').length).toBeLessThan(25);
  });

  test('the MCP example runs: an SDK client lists and calls its tools, and it exits when stdin closes', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/adapters/mcp/mcp.examples.ts'],
      cwd: root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'readme-test', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['hash', 'calculator']);
    const result = await client.callTool({ name: 'calculator', arguments: { expression: '2 ^ 10' } });
    expect(result.content).toEqual([{ type: 'text', text: '2 ^ 10 = 1024' }]);
    const pid = transport.pid!;
    const closing = Date.now();
    await client.close();
    // The SDK transport sends SIGTERM only after 2 s; the example exited on its own before that.
    expect(Date.now() - closing).toBeLessThan(2_000);
    expect(() => process.kill(pid, 0)).toThrow();
  });

  test('the across-machines example runs: its call goes through Redis to a toolpool worker and comes back', async () => {
    const redis = await startRedis();
    try {
      const machine = await startMachine(redis.url, 'tools', { tools: 'tools', args: ['--isolation', 'process'] });
      const example = spawn(process.execPath, ['--import', 'tsx', 'src/adapters/bullmq/bullmq.examples.ts'], {
        cwd: root,
        env: { ...process.env, REDIS_URL: redis.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      example.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      expect((await exited(example)).code).toBe(0);
      expect(stdout).toContain("[ { type: 'text', text: '2 ^ 10 = 1024' } ]");
      machine.kill('SIGTERM');
      expect((await exited(machine)).code).toBe(0);
    } finally {
      await redis.stop();
    }
    // Three processes start here (Redis, a worker machine, the example); under load a start alone took over 20 s.
  }, 150_000);

  const open = useExecutors();

  test('the tool metadata example, served to an SDK client with elicitation: hints, outputSchema, progress with a total, the approval', async () => {
    const executor = await open({ tools: [deploy] });
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client(
      { name: 'readme-test', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const questions: string[] = [];
    client.setRequestHandler(
      ElicitRequestSchema,
      (request) => (questions.push(request.params.message), { action: 'accept', content: {} }),
    );
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    expect(tools[0]).toMatchObject({
      title: 'Deploy',
      annotations: { destructiveHint: true },
      outputSchema: { required: ['service', 'ready'] },
    });
    const progress: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: 2 } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    expect(questions).toHaveLength(1);
    expect(result).toMatchObject({ isError: false, structuredContent: { service: 'api', ready: 2 } });
    expect(progress).toEqual([
      { progress: 1, total: 2, message: '1/2 ready' },
      { progress: 2, total: 2, message: '2/2 ready' },
    ]);
    await server.close();
  });

  test.skipIf(unsupportedNode)(
    'the AI SDK approval example runs with the SDK mock model: asked once, then the call runs',
    async () => {
      const { runWithApprovals } = await import('../../src/adapters/ai-sdk/approval.examples.ts');
      const usage = {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      };
      const model = new MockLanguageModelV4({
        doGenerate: [
          {
            content: [
              {
                type: 'tool-call',
                toolCallId: 'd',
                toolName: 'deploy',
                input: JSON.stringify({ service: 'api', replicas: 1 }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          },
          {
            content: [{ type: 'text', text: 'Deployed.' }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          },
        ],
      });
      const executor = await open({ tools: [deploy] });
      const asked: string[] = [];
      const text = await runWithApprovals(
        model,
        executor,
        'deploy api',
        async (name, input) => (asked.push(`${name} ${JSON.stringify(input)}`), true),
      );
      expect(text).toBe('Deployed.');
      expect(asked).toEqual(['deploy {"service":"api","replicas":1}']);
      const sent = model.doGenerateCalls[1]!.prompt.flatMap((message) =>
        message.role === 'tool' ? message.content : [],
      );
      expect(sent).toContainEqual(
        expect.objectContaining({ type: 'tool-result', output: { type: 'text', value: 'api: 1 ready' } }),
      );
    },
  );

  test.skipIf(unsupportedNode)('the AI SDK example runs with the SDK mock model', async () => {
    const { hashWithModel } = await import('../../src/adapters/ai-sdk/ai-sdk.examples.ts');
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          content: [
            {
              type: 'tool-call',
              toolCallId: 'h',
              toolName: 'hash',
              input: JSON.stringify({ text: 'hello', rounds: '1000' }),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'Here is the digest.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        },
      ],
    });
    expect(await hashWithModel(model)).toBe('Here is the digest.');
    const sent = model.doGenerateCalls[1]!.prompt.flatMap((message) =>
      message.role === 'tool' ? message.content : [],
    );
    expect(sent).toEqual([
      expect.objectContaining({
        type: 'tool-result',
        output: { type: 'text', value: expect.stringMatching(/^[0-9a-f]{64}$/) },
      }),
    ]);
  });
});
