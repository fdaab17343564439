import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitHandler } from '../../index.ts';
import { ElicitErrors } from '../../core/errors.ts';
import { ToolpoolError } from '../../core/error-codes.ts';
import { canAskPerson } from './approval.ts';

/**
 * Behind `serve`, a tool's `ctx.elicit` is the client's `elicitation/create`
 * (form mode), sent on the tools/call request's own stream, ended by the
 * call's signal, bounded by `timeoutMs`. A client that declared no
 * elicitation cannot answer: the tool is told so.
 */
export function clientAnswers(server: Server, requestId: RequestId, timeoutMs: number): ElicitHandler {
  return async (request, { signal }) => {
    if (!canAskPerson(server))
      throw new ToolpoolError(
        'TOOLPOOL_ERR_ELICITATION',
        ElicitErrors.clientCannotAnswer(server.getClientVersion()?.name),
      );
    return server.elicitInput(
      { mode: 'form', message: request.message, requestedSchema: request.requestedSchema as never },
      { relatedRequestId: requestId, signal, timeout: timeoutMs },
    ) as never;
  };
}
