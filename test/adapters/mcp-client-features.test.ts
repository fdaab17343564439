import { Type } from '@sinclair/typebox';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test } from 'vitest';
import { createMcpServer, type McpServerOptions } from '../../src/adapters/mcp/index.ts';
import { defineTool, type Executor, type ExecutorOptions } from '../../src/index.ts';
import { exampleTool, useExecutors } from '../support/executors.ts';

// What MCP clients use beyond tools/list and tools/call: annotations, outputSchema with
// structuredContent, progress with a total, and approvals asked through elicitation. Driven by
// the official SDK client over its in-memory transport.

const ran: string[] = [];

const deploy = defineTool({
  name: 'deploy',
  label: 'Deploy',
  description: 'Deploy a service',
  parameters: Type.Object({ service: Type.String(), replicas: Type.Integer() }),
  needsApproval: true,
  annotations: { destructiveHint: true, openWorldHint: true },
  execute: ({ service, replicas }) => {
    ran.push(service);
    return { content: [{ type: 'text', text: `deployed ${service} x${replicas}` }] };
  },
});

const refund = defineTool({
  name: 'refund',
  description: 'Refund an amount; more than 100 needs approval',
  parameters: Type.Object({ amount: Type.Number() }),
  needsApproval: ({ amount }) => amount > 100,
  execute: ({ amount }) => ({ content: [{ type: 'text', text: `refunded ${amount}` }] }),
});

const stats = defineTool({
  name: 'stats',
  description: 'Count words; `broken` returns details that break its outputSchema',
  parameters: Type.Object({ text: Type.String(), broken: Type.Optional(Type.Boolean()) }),
  outputSchema: Type.Object({ words: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  execute: ({ text, broken }) => ({
    content: [{ type: 'text', text: 'counted' }],
    details: broken ? { words: 'many' } : { words: text.split(/\s+/).filter(Boolean).length },
  }),
});

const steps = defineTool({
  name: 'steps',
  description: 'Three steps with a total, then a percent, then a plain message',
  parameters: Type.Object({}),
  execute: (_args, ctx) => {
    ctx.onUpdate({ content: [], details: { progress: 1, total: 3 } });
    ctx.onUpdate({ content: [], details: { progress: 2, total: 3 } });
    ctx.onUpdate({ content: [{ type: 'text', text: 'almost' }], details: { progress: 2, total: 3 } });
    ctx.onUpdate({ content: [], details: { percent: 90 } });
    ctx.onUpdate({ content: [{ type: 'text', text: 'done soon' }] });
    return { content: [{ type: 'text', text: 'ok' }] };
  },
});

type Answer = (request: ElicitRequest) => Promise<ElicitResult> | ElicitResult;

describe('toolpool/mcp: what MCP clients use', () => {
  const open = useExecutors();

  /** A server over the executor and an SDK client; `answer` makes the client declare elicitation and answer with it. */
  async function connect(executor: Executor, answer?: Answer, options: McpServerOptions = {}) {
    const server = createMcpServer(executor, options);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client(
      { name: 'test-client', version: '1.0.0' },
      answer ? { capabilities: { elicitation: { form: {} } } } : {},
    );
    const asked: ElicitRequest['params'][] = [];
    if (answer) {
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params);
        return answer(request);
      });
    }
    await client.connect(clientSide);
    return { client, server, asked };
  }

  const executorWith = (options: Partial<ExecutorOptions> = {}) =>
    open({ tools: [deploy, refund, stats, steps, exampleTool('hash.ts'), exampleTool('calculator.ts')], ...options });
  const textOf = (result: unknown) =>
    (result as { content: Array<{ text?: string }> }).content.map((part) => part.text ?? '').join('');

  test("tools/list carries each tool's annotations and outputSchema; tools without them have neither key", async () => {
    const { client, server } = await connect(await executorWith());
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('deploy')).toMatchObject({
      title: 'Deploy',
      annotations: { destructiveHint: true, openWorldHint: true },
    });
    expect(byName.get('deploy')).not.toHaveProperty('outputSchema');
    expect(byName.get('stats')!.outputSchema).toEqual({
      type: 'object',
      additionalProperties: false,
      required: ['words'],
      properties: { words: { type: 'integer', minimum: 0 } },
    });
    expect(byName.get('stats')).not.toHaveProperty('annotations');
    // A module tool's (tools/hash.ts), read in a worker.
    expect(byName.get('hash')).toMatchObject({
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      outputSchema: { type: 'object', required: ['algorithm', 'rounds', 'digest'] },
    });
    await server.close();
  });

  test('a tool with an outputSchema sends its details as structuredContent (the SDK client validates them too)', async () => {
    const { client, server } = await connect(await executorWith());
    await client.listTools(); // the SDK client validates structuredContent against the listed outputSchema
    const counted = await client.callTool({ name: 'stats', arguments: { text: 'one two three' } });
    expect(counted).toMatchObject({ isError: false, structuredContent: { words: 3 } });
    const hashed = await client.callTool({ name: 'hash', arguments: { text: 'x', rounds: 3 } });
    expect(hashed).toMatchObject({
      isError: false,
      structuredContent: { algorithm: 'sha256', rounds: 3, digest: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    // Without an outputSchema the details stay on the host.
    const calculated = await client.callTool({ name: 'calculator', arguments: { expression: '1 + 1' } });
    expect(calculated).not.toHaveProperty('structuredContent');
    await server.close();
  });

  test('details that break the outputSchema are an error result that says so, with no structuredContent', async () => {
    const { client, server } = await connect(await executorWith());
    await client.listTools();
    const result = await client.callTool({ name: 'stats', arguments: { text: 'a', broken: true } });
    expect(result.isError).toBe(true);
    expect(result).not.toHaveProperty('structuredContent');
    expect(textOf(result)).toBe(
      'Tool "stats" returned details that do not match its outputSchema:\n  - words: must be integer\nReturned details: {"words":"many"}',
    );
    await server.close();
  });

  test('progress: { progress, total } and { percent } give MCP progress and total; a number that does not grow, or none, counts one on and keeps the last total while within it', async () => {
    const { client, server } = await connect(await executorWith());
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    await client.callTool({ name: 'steps', arguments: {} }, undefined, {
      onprogress: (progress) => void seen.push(progress),
    });
    expect(seen).toEqual([
      { progress: 1, total: 3, message: '1/3' },
      { progress: 2, total: 3, message: '2/3' },
      { progress: 3, total: 3, message: 'almost' },
      { progress: 90, total: 100, message: '90%' },
      { progress: 91, total: 100, message: 'done soon' },
    ]);
    await server.close();
  });

  describe('needsApproval through MCP elicitation', () => {
    test('the client is asked with the tool and the validated arguments; accept runs the call', async () => {
      ran.length = 0;
      const { client, server, asked } = await connect(await executorWith(), () => ({ action: 'accept', content: {} }));
      const result = await client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: '3' } });
      expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: 'deployed api x3' }] });
      expect(ran).toEqual(['api']);
      expect(asked).toHaveLength(1);
      // The arguments as they run: "3" was coerced to 3 before the question.
      expect(asked[0]).toMatchObject({
        mode: 'form',
        message:
          'Allow the tool "Deploy" (deploy) to run with these arguments?\n{\n  "service": "api",\n  "replicas": 3\n}',
        requestedSchema: { type: 'object', properties: {} },
      });
      await server.close();
    });

    test.each([
      ['decline', 'Not run: a person rejected this call of "deploy" (declined in the MCP client "test-client").'],
      [
        'cancel',
        'Not run: a person rejected this call of "deploy" (the approval request in the MCP client "test-client" was dismissed).',
      ],
    ] as const)('%s: the call does not run and its error result says the person declined', async (action, text) => {
      ran.length = 0;
      const { client, server } = await connect(await executorWith(), () => ({ action }));
      const result = await client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: 1 } });
      expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text }] });
      expect(ran).toEqual([]);
      await server.close();
    });

    test('a needsApproval function that says no runs the call without asking; one that says yes asks', async () => {
      const { client, server, asked } = await connect(await executorWith(), () => ({ action: 'accept', content: {} }));
      expect(textOf(await client.callTool({ name: 'refund', arguments: { amount: 5 } }))).toBe('refunded 5');
      expect(asked).toHaveLength(0);
      expect(textOf(await client.callTool({ name: 'refund', arguments: { amount: 500 } }))).toBe('refunded 500');
      expect(asked).toHaveLength(1);
      await server.close();
    });

    test('a client without the elicitation capability gets an error result saying what it lacks and what to do', async () => {
      ran.length = 0;
      const { client, server } = await connect(await executorWith());
      const result = await client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: 1 } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        'Not run: "deploy" needs a person\'s approval, and the MCP client "test-client" cannot ask for it: the client does not support ' +
          'MCP elicitation (form mode), which is how toolpool asks. Use an MCP client that supports elicitation, or serve this tool without needsApproval.',
      );
      expect(ran).toEqual([]);
      // A call that needs no approval still runs.
      expect(textOf(await client.callTool({ name: 'refund', arguments: { amount: 5 } }))).toBe('refunded 5');
      await server.close();
    });

    test('no answer within approvalTimeoutMs refuses the call, saying so; the tool event log shows it', async () => {
      ran.length = 0;
      const executor = await executorWith();
      const ends: string[] = [];
      executor.subscribe(
        (event) => void (event.type === 'tool_end' && ends.push(`${event.toolName} ${event.isError}`)),
      );
      const { client, server } = await connect(executor, () => new Promise<never>(() => {}), {
        approvalTimeoutMs: 200,
      });
      const result = await client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: 1 } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /^Not run: "deploy" needs a person's approval, and asking for it through the MCP client "test-client" failed \(.*timed out.*\), so it did not run\./i,
      );
      expect(ran).toEqual([]);
      expect(ends).toEqual(['deploy true']);
      await server.close();
    });

    test('a call cancelled while the person is asked does not run', async () => {
      ran.length = 0;
      let asking!: () => void;
      const asked = new Promise<void>((resolve) => (asking = resolve));
      const { client, server } = await connect(await executorWith(), () => {
        asking();
        return new Promise<never>(() => {});
      });
      const controller = new AbortController();
      const call = client.callTool({ name: 'deploy', arguments: { service: 'api', replicas: 1 } }, undefined, {
        signal: controller.signal,
      });
      await asked;
      controller.abort();
      await expect(call).rejects.toThrow(/abort/i);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(ran).toEqual([]);
      await server.close();
    });
  });
});
