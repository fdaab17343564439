/**
 * ctx.elicit: a tool asks the person mid-call, from every tier (inline,
 * worker, process, sandbox where bubblewrap works); the host checks the
 * request, asks `onElicit` one question at a time per call, checks the
 * answer against the requested schema, and ends the question when the
 * call is stopped.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../src/adapters/mcp/index.ts';
import {
  Agent,
  createExecutor,
  scriptedModel,
  type ElicitHandler,
  type ElicitRequest,
  type Executor,
} from '../src/index.ts';
import { checkSandboxSupport } from '../src/isolation/sandbox/bwrap-support.ts';
import { withElicitDefaults } from '../src/tools/elicitation-check.ts';
import askTool from './fixtures/elicitation/ask.ts';
import { call, fixture, textOf } from './support/executors.ts';

// The sandbox tier runs where bubblewrap works; elsewhere its cases are left out (sandbox-tier.test.ts says why).
const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);
const TIERS: ('inline' | 'worker' | 'process' | 'sandbox')[] = ['inline', 'worker', 'process'];
if (sandboxWorks) TIERS.push('sandbox');

/** What onElicit saw, and what it answers: the answer may be replaced per test. */
const asked: { request: ElicitRequest; toolName: string; callId: string }[] = [];
let answer: ElicitHandler = () => ({ action: 'accept', content: { name: 'Ada' } });

const executors = new Map<string, Executor>();

beforeAll(async () => {
  const onElicit: ElicitHandler = (request, context) => {
    asked.push({ request, toolName: context.toolName, callId: context.callId });
    return answer(request, context);
  };
  for (const tier of TIERS)
    executors.set(
      tier,
      await createExecutor({
        tools: [tier === 'inline' ? askTool : fixture('elicitation/ask.ts')],
        ...(tier === 'inline' ? {} : { isolation: tier }),
        onElicit,
        workers: { max: 2 },
      }),
    );
}, 60_000);

afterAll(async () => {
  await Promise.all([...executors.values()].map((executor) => executor.close()));
});

async function run(tier: string, mode: string, options = {}) {
  const { results } = await executors.get(tier)!.executeBatch([call(`c-${mode}`, 'ask', { mode })], options);
  return results[0]!;
}

describe.each(TIERS)('ctx.elicit in the %s tier', (tier) => {
  test('asks onElicit with the checked request and gets the checked answer', async () => {
    answer = () => ({ action: 'accept', content: { name: 'Ada' } });
    asked.length = 0;
    const result = await run(tier, 'form');
    expect(result.isError).toBe(false);
    expect(JSON.parse(textOf(result))).toEqual({ action: 'accept', content: { name: 'Ada' } });
    expect(asked).toEqual([
      {
        toolName: 'ask',
        callId: 'c-form',
        request: {
          message: 'Who are you?',
          requestedSchema: {
            type: 'object',
            properties: { name: { type: 'string', minLength: 1 }, age: { type: 'integer', minimum: 0, default: 30 } },
            required: ['name'],
          },
        },
      },
    ]);
  });

  test('decline and cancel reach the tool without content', async () => {
    answer = () => ({ action: 'decline', content: { name: 'ignored' } });
    expect(JSON.parse(textOf(await run(tier, 'form')))).toEqual({ action: 'decline' });
  });

  test('an answer that does not fit the form is refused before the tool sees it', async () => {
    answer = () => ({ action: 'accept', content: { name: 'Ada', age: -3 } });
    expect(JSON.parse(textOf(await run(tier, 'caught')))).toEqual({
      code: 'TOOLPOOL_ERR_ELICITATION',
      message: expect.stringContaining('does not fit the form: /age must be >= 0'),
    });
    answer = () => ({ action: 'accept', content: { name: 'Ada', extra: true } });
    expect(textOf(await run(tier, 'caught'))).toContain('does not fit the form');
    answer = () => ({ action: 'maybe' }) as never;
    expect(textOf(await run(tier, 'caught'))).toContain('not accept, decline or cancel');
  });

  test('a form that is not flat is refused on the host, and onElicit is not asked', async () => {
    asked.length = 0;
    expect(JSON.parse(textOf(await run(tier, 'nested-schema')))).toEqual({
      code: 'TOOLPOOL_ERR_ELICITATION',
      message: expect.stringContaining('field "address": its type must be'),
    });
    expect(asked).toEqual([]);
  });

  test('one question at a time per call', async () => {
    // The first answer is held long enough for the second question to cross from the tool's thread or process.
    answer = () =>
      new Promise((resolve) => setTimeout(() => resolve({ action: 'accept', content: { name: 'Ada' } }), 300));
    expect(JSON.parse(textOf(await run(tier, 'twice')))).toEqual({
      first: { action: 'accept', content: { name: 'Ada' } },
      second: { code: 'TOOLPOOL_ERR_ELICITATION', message: expect.stringContaining('already asking') },
    });
  });

  test('an abort while asking ends the question: the handler sees its signal fire, the tool a rejection', async () => {
    const controller = new AbortController();
    let handlerSignal: AbortSignal | undefined;
    answer = (_request, { signal }) => {
      handlerSignal = signal;
      setTimeout(() => controller.abort(), 20);
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('gone'))));
    };
    const result = await run(tier, 'until-stopped', { signal: controller.signal });
    expect(handlerSignal?.aborted).toBe(true);
    // The tool caught the end of its question and returned at once (it was stopped cooperatively).
    expect(textOf(result)).toMatch(/TOOLPOOL_ERR_ELICITATION|aborted/);
  });

  test('a handler that throws: the tool gets the elicitation error with its text', async () => {
    answer = () => {
      throw new Error('the terminal is closed');
    };
    expect(JSON.parse(textOf(await run(tier, 'caught')))).toEqual({
      code: 'TOOLPOOL_ERR_ELICITATION',
      message: expect.stringContaining('the terminal is closed'),
    });
  });
});

describe('without onElicit', () => {
  test('ctx.elicit rejects with TOOLPOOL_ERR_ELICITATION; uncaught, the error result says how to answer', async () => {
    const executor = await createExecutor({ tools: [askTool] });
    try {
      const { results } = await executor.executeBatch([
        call('a', 'ask', { mode: 'caught' }),
        call('b', 'ask', { mode: 'uncaught' }),
      ]);
      expect(JSON.parse(textOf(results[0]!))).toEqual({
        code: 'TOOLPOOL_ERR_ELICITATION',
        message: expect.stringContaining('no one can answer it here'),
      });
      expect(results[1]!.isError).toBe(true);
      expect(textOf(results[1]!)).toContain('createExecutor({ onElicit })');
    } finally {
      await executor.close();
    }
  });

  test('a batch may bring its own onElicit (as an Agent or an MCP server does)', async () => {
    const executor = await createExecutor({ tools: [askTool] });
    try {
      const { results } = await executor.executeBatch([call('a', 'ask', { mode: 'form' })], {
        onElicit: () => ({ action: 'cancel' }),
      });
      expect(JSON.parse(textOf(results[0]!))).toEqual({ action: 'cancel' });
    } finally {
      await executor.close();
    }
  });
});

describe('under an Agent', () => {
  test("the Agent's onElicit answers its tools' questions, over the executor's", async () => {
    const executor = await createExecutor({ tools: [askTool], onElicit: () => ({ action: 'decline' }) });
    try {
      const agent = new Agent({
        model: scriptedModel([{ toolCalls: [{ name: 'ask', arguments: { mode: 'form' } }] }, { text: 'done' }]),
        executor,
        onElicit: (_request, { toolName }) => ({ action: 'accept', content: { name: `asked by ${toolName}` } }),
      });
      const messages = await agent.prompt('go');
      const result = messages.find((message) => message.role === 'toolResult');
      expect(result && JSON.parse(textOf(result))).toEqual({ action: 'accept', content: { name: 'asked by ask' } });
    } finally {
      await executor.close();
    }
  });
});

describe('behind serve (createMcpServer), an SDK client answers', () => {
  async function served(capabilities: ClientCapabilities) {
    const executor = await createExecutor({ tools: [fixture('elicitation/ask.ts')], workers: { max: 1 } });
    const server = createMcpServer(executor);
    const client = new Client({ name: 'elicit-test', version: '1.0.0' }, { capabilities });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    return {
      client,
      close: async () => {
        await client.close();
        await server.close();
        await executor.close();
      },
    };
  }

  test("ctx.elicit is the client's elicitation/create, and its answer reaches the tool", async () => {
    const { client, close } = await served({ elicitation: { form: {} } });
    try {
      const seen: unknown[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        seen.push(request.params);
        return { action: 'accept', content: { name: 'Grace', age: 85 } };
      });
      const result = await client.callTool({ name: 'ask', arguments: { mode: 'form' } });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({
        action: 'accept',
        content: { name: 'Grace', age: 85 },
      });
      expect(seen).toEqual([expect.objectContaining({ mode: 'form', message: 'Who are you?' })]);
    } finally {
      await close();
    }
  });

  test('a client without elicitation: the tool is told no one can answer', async () => {
    const { client, close } = await served({});
    try {
      const result = await client.callTool({ name: 'ask', arguments: { mode: 'caught' } });
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual({
        code: 'TOOLPOOL_ERR_ELICITATION',
        message: expect.stringContaining('does not support MCP elicitation'),
      });
    } finally {
      await close();
    }
  });
});

describe('a hostile worker', () => {
  let executor: Executor;
  let questions = 0;
  beforeAll(async () => {
    executor = await createExecutor({
      tools: [fixture('elicitation/forged-question.ts')],
      onElicit: () => {
        questions++;
        return new Promise((resolve) => setTimeout(() => resolve({ action: 'accept', content: { a: 'ok' } }), 200));
      },
      workers: { max: 1 },
    });
  }, 30_000);
  afterAll(() => executor?.close());

  const attack = async (name: string) =>
    (await executor.executeBatch([call(name, 'forge_question', { attack: name })])).results[0]!;

  test.each(['frame-without-id', 'question-for-another-call'])(
    'a forged question frame (%s) retires the worker; no one is asked; the next call runs',
    async (name) => {
      questions = 0;
      const result = await attack(name);
      expect(result.isError).toBe(true);
      expect(result.errorCode).toBe('CRASHED');
      expect(questions).toBe(0);
      expect(textOf(await attack('huge-message'))).toContain('refused');
    },
  );

  test('a request over the bounds is refused on the host before anyone is asked', async () => {
    questions = 0;
    expect(textOf(await attack('huge-message'))).toMatch(
      /refused: ctx\.elicit\(\) refused: "message" has 2000000 characters/,
    );
    expect(questions).toBe(0);
  });

  test('a flood of questions from one call: one is asked, the rest refused', async () => {
    questions = 0;
    expect(textOf(await attack('flood'))).toBe('1 answered');
    expect(questions).toBe(1);
  });

  test('a field named __proto__ is asked as a field, not a prototype', async () => {
    questions = 0;
    const reply = textOf(await attack('proto-schema'));
    // The field stays a field: the person is asked, and an answer without it fits the form.
    expect(({} as Record<string, unknown>).type).toBeUndefined();
    expect(reply).toBe(
      'refused: ctx.elicit() got an answer it cannot use: the accepted content does not fit the form: (content) must NOT have additional properties.',
    );
    expect(questions).toBe(1);
  });
});

describe("a server's form defaults (SEP-1034), filled in by the MCP client", () => {
  test('a field named __proto__ gets its default as a field of its own; no prototype is set', () => {
    // A server's requestedSchema arrives as JSON: "__proto__" is an ordinary own key there.
    const schema = JSON.parse('{"properties":{"__proto__":{"type":"object","default":{"polluted":true}}}}');
    const filled = withElicitDefaults(schema, {});
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, '__proto__')).toBe(true);
    expect((filled as { polluted?: unknown }).polluted).toBeUndefined();
  });
});
