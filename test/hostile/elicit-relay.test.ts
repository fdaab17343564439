import { describe, expect, test, vi } from 'vitest';
import { createExecutor, type ElicitHandler, type ElicitRequest } from '../../src/index.ts';
import { checkElicitRequest, withElicitDefaults } from '../../src/tools/elicitation-check.ts';
import { answerElicitations } from '../../src/mcp-client/elicitation.ts';
import { fixture } from '../support/executors.ts';

// A tool's question (ctx.elicit) is relayed from its worker or child to the host: untrusted, and only for a call
// that is still running.

describe('elicitation relay', () => {
  test.each(['worker', 'process'] as const)(
    '%s tier: a question posted after the call was stopped is not asked',
    async (isolation) => {
      const asked: ElicitRequest[] = [];
      const executor = await createExecutor({
        tools: [fixture('hostile/elicit-after-stop.ts')],
        isolation,
        limits: { timeoutMs: 500, abortGraceMs: 2_000 },
        onElicit: (request) => {
          asked.push(request);
          return { action: 'decline' };
        },
      });
      try {
        const { results } = await executor.executeBatch([{ id: 'a', name: 'elicit-after-stop', arguments: {} }]);
        expect(results[0]!.isError).toBe(true);
        expect(asked).toEqual([]);
      } finally {
        await executor.close();
      }
    },
    30_000,
  );

  test('a field whose type is a key of Object.prototype is refused with a clear reason (not a TypeError)', () => {
    for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(
        checkElicitRequest({ message: 'm', requestedSchema: { type: 'object', properties: { f: { type } } } }),
      ).toMatch(/its type must be/);
  });

  test('the defaults filled into an answer never set its prototype (a field named __proto__ with a default)', () => {
    const properties = JSON.parse(
      '{"__proto__": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "default": ["a"]}}',
    );
    const filled = withElicitDefaults({ properties }, {});
    expect(Object.getPrototypeOf(filled)).toBe(Object.prototype);
    expect(Object.hasOwn(filled, '__proto__')).toBe(true);
  });
});

describe("an MCP server's questions (elicitation/create)", () => {
  const FORM = { message: 'm', requestedSchema: { type: 'object', properties: {} } };
  const declineSoon = () => new Promise((resolve) => setTimeout(() => resolve({ action: 'decline' }), 50));
  function answering(
    inCall: () => boolean,
    onElicit: ElicitHandler = declineSoon as never,
    callsEnded = new AbortController(),
  ) {
    let handler: ((request: unknown, extra: unknown) => Promise<unknown>) | undefined;
    const client = { setRequestHandler: (_schema: unknown, fn: typeof handler) => (handler = fn) };
    let asked = 0;
    answerElicitations(
      client as never,
      'srv',
      (request, context) => {
        asked++;
        return onElicit(request, context);
      },
      { running: inCall, ended: () => callsEnded.signal },
    );
    const ask = () =>
      handler!(
        { method: 'elicitation/create', params: FORM },
        { mcpReq: { signal: new AbortController().signal } },
      ).then(
        () => 'answered',
        (error: Error) => error.message,
      );
    return { ask, asked: () => asked };
  }

  test('a flood of questions: one at a time is asked, the rest refused', async () => {
    const { ask, asked } = answering(() => true);
    const answers = await Promise.all(Array.from({ length: 50 }, ask));
    expect(asked()).toBe(1);
    expect(answers.filter((answer) => answer === 'answered')).toHaveLength(1);
  });

  test('a question still open when its calls end is ended with them (the person is not kept asked)', async () => {
    const callsEnded = new AbortController();
    let heard: AbortSignal | undefined;
    const { ask } = answering(
      () => true,
      (_request, { signal }) =>
        new Promise((resolve) => {
          heard = signal;
          signal.addEventListener('abort', () => resolve({ action: 'accept', content: {} }));
        }),
      callsEnded,
    );
    const answer = ask();
    await vi.waitFor(() => expect(heard).toBeDefined());
    callsEnded.abort();
    expect(await answer).toMatch(/the call it belonged to ended/);
    expect(heard!.aborted).toBe(true);
  });

  test('a question while none of its calls runs is refused', async () => {
    const { ask, asked } = answering(() => false);
    expect(await ask()).toMatch(/no call/);
    expect(asked()).toBe(0);
  });
});
