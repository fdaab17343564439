import { elicitErrorCode } from '../../core/elicitation.ts';
import { errorMessage } from '../../core/errors.ts';
import type { ElicitMessage, HostReplyMessage } from './protocol.ts';
import type { PoolCall } from './pool-call.ts';

/**
 * A tool's question (ctx.elicit) from a worker, for a call the host sent
 * it: asked through the call's host answer (which checks the request, one
 * at a time, and the answer), and answered on the channel like a host
 * call. Never throws; a reply the channel cannot take is dropped (the
 * worker is gone).
 */
export function answerQuestion(
  call: PoolCall,
  message: ElicitMessage,
  send: (reply: Omit<HostReplyMessage, 't'>) => void,
): void {
  const { id } = message;
  const reply = (answer: Omit<HostReplyMessage, 't'>) => {
    try {
      send(answer);
    } catch {
      // the worker is gone
    }
  };
  call.elicit(message.request).then(
    (value) => reply({ id, ok: true, value }),
    (error: unknown) => {
      const code = elicitErrorCode(error);
      reply(code ? { id, ok: false, error: errorMessage(error), code } : { id, ok: false, error: errorMessage(error) });
    },
  );
}
