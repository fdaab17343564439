import { elicitErrorCode, type CallElicit, type ElicitHandler, type ElicitResult } from '../core/elicitation.ts';
import { ToolpoolError } from '../core/error-codes.ts';
import { ElicitErrors, errorMessage } from '../core/errors.ts';
import { checkElicitAnswer, checkElicitRequest } from '../tools/elicitation-check.ts';

const elicitError = (message: string) => new ToolpoolError('TOOLPOOL_ERR_ELICITATION', message);

/**
 * One call's `ctx.elicit` on the host, whatever tier the tool runs in: the
 * request (untrusted: it may come from a worker or a child) is checked and
 * copied, one question at a time, the handler is asked with a signal that
 * fires when the call is stopped or ends, and its answer is checked against
 * the requested schema before it goes back to the tool. `end` fires when
 * the executor is done with the call; without a handler (and so no `end`)
 * every question is refused, saying how to provide one.
 */
export function callElicit(
  handler: ElicitHandler | undefined,
  toolName: string,
  callId: string,
  end: CallEnd | undefined,
): CallElicit {
  if (!handler || !end) return () => Promise.reject(elicitError(ElicitErrors.noHandler(toolName)));
  let asking = false;
  return async (raw, stopped) => {
    const request = checkElicitRequest(raw);
    if (typeof request === 'string') throw elicitError(ElicitErrors.invalidRequest(request));
    if (asking) throw elicitError(ElicitErrors.alreadyAsking());
    const ended = end.signal;
    const signal = stopped ? AbortSignal.any([ended, stopped]) : ended;
    if (signal.aborted) throw elicitError(ElicitErrors.ended());
    asking = true;
    let onAbort: (() => void) | undefined;
    try {
      const answer = await Promise.race([
        Promise.resolve()
          .then(() => handler(request, { toolName, callId, signal }))
          .catch((error: unknown) => {
            if (signal.aborted) throw elicitError(ElicitErrors.ended());
            // A handler's own elicitation error (a client that cannot answer) says it best; anything else is wrapped.
            throw elicitErrorCode(error) ? error : elicitError(ElicitErrors.failed(errorMessage(error)));
          }),
        new Promise<never>((_, reject) => {
          onAbort = () => reject(elicitError(ElicitErrors.ended()));
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      const checked: ElicitResult | string = checkElicitAnswer(answer, request);
      if (typeof checked === 'string') throw elicitError(ElicitErrors.invalidAnswer(checked));
      return checked;
    } finally {
      asking = false;
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  };
}

/** A call's end as the executor sees it, as a signal made only when a question needs one (most calls never ask). */
export class CallEnd {
  #controller: AbortController | undefined;
  #ended = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#ended) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  end(): void {
    this.#ended = true;
    this.#controller?.abort();
  }
}
