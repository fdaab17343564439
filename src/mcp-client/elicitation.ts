import { ProtocolError, ProtocolErrorCode, type Client, type ElicitResult } from '@modelcontextprotocol/client';
import type { ElicitHandler } from '../core/elicitation.ts';
import { errorMessage } from '../core/errors.ts';
import { checkElicitAnswer, checkElicitRequest, withElicitDefaults } from '../tools/elicitation-check.ts';

/** The capability a client declares when the host can answer a server's questions: MCP elicitation, form mode. */
export const ELICITATION_CAPABILITY = { elicitation: { form: {} } } as const;

/**
 * Answers a server's `elicitation/create` through the host's `onElicit`
 * (the same handler that answers the executor's own tools), as the
 * person's answer: the request is checked as a tool's would be (a flat
 * form, bounded), the fields an accepted answer left out get the schema's
 * defaults (SEP-1034), and the answer must fit the form before it is sent.
 * The handler is told the server's name as `toolName` (the question belongs
 * to one of its calls; the protocol does not say which). The same handler
 * answers both eras: a 2025-era server's `elicitation/create` request, and
 * on 2026-07-28 the question a call's `input_required` result carries (the
 * SDK retries the call with the answer).
 */
export function answerElicitations(
  client: Client,
  server: string,
  onElicit: ElicitHandler,
  calls: { running: () => boolean; ended: () => AbortSignal },
): void {
  // The server is untrusted like a tool: one question at a time, and only while one of its calls runs.
  let asking = false;
  client.setRequestHandler('elicitation/create', async (request, ctx): Promise<ElicitResult> => {
    const { params } = request;
    if (params.mode === 'url')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'toolpool answers elicitation in form mode only');
    const checked = checkElicitRequest({ message: params.message, requestedSchema: params.requestedSchema });
    if (typeof checked === 'string')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `elicitation/create refused: ${checked}`);
    if (!calls.running())
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        'elicitation/create refused: no call of this server is running',
      );
    if (asking)
      throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'elicitation/create refused: one question at a time');
    asking = true;
    let answer: unknown;
    try {
      // The question ends with the server's cancel, or once no call of the server runs any more (a server that asks and
      // then answers its call at once may not keep the person asked after the call is over).
      const signal = AbortSignal.any([ctx.mcpReq.signal, calls.ended()]);
      answer = await onElicit(checked, { toolName: server, callId: '', signal });
      // A plain throw: it only carries the reason to the catch below, which wraps it in the protocol error.
      if (signal.aborted) throw new Error('the call it belonged to ended');
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InternalError, `no answer: ${errorMessage(error)}`);
    } finally {
      asking = false;
    }
    const filled =
      typeof answer === 'object' && answer !== null && (answer as { action?: unknown }).action === 'accept'
        ? {
            action: 'accept',
            content: withElicitDefaults(
              checked.requestedSchema,
              (answer as { content?: Record<string, unknown> }).content,
            ),
          }
        : answer;
    const result = checkElicitAnswer(filled, checked);
    if (typeof result === 'string') throw new ProtocolError(ProtocolErrorCode.InternalError, `no answer: ${result}`);
    return result as ElicitResult;
  });
}
