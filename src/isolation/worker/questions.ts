import { elicitErrorCode } from '../../core/elicitation.ts';
import { errorMessage } from '../../core/errors.ts';
import type { ElicitMessage, HostReplyMessage } from './protocol.ts';
import type { PoolCall } from './pool-call.ts';

/**
 * A tool's question (ctx.elicit) from a worker, for a call the host sent
 * it: asked through the call's host answer (which checks the request, one
 * at a time, and the answer), and answered on the channel like a host
 * call.
 */
export function answerQuestion(
  call: PoolCall,
  message: ElicitMessage,
  send: (reply: Omit<HostReplyMessage, 't'>) => void,
): void {
  relayAnswer(call.elicit(message.request), message.id, send);
}

/** A question's answer as a host reply carries it, in the worker's channel and the child's. */
export type QuestionReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string; code?: 'TOOLPOOL_ERR_ELICITATION' };

/**
 * Sends a question's answer back as a host reply with the question's id:
 * the answer, or the error's text with the elicitation code when it has it
 * (the only code a reply may carry). Never throws; a reply the channel
 * cannot take is dropped (the worker or child is gone). The process tier
 * relays its child's questions with it too.
 */
export function relayAnswer(answer: Promise<unknown>, id: number, send: (reply: QuestionReply) => void): void {
  const reply = (sent: QuestionReply) => {
    try {
      send(sent);
    } catch {
      // the worker or child is gone
    }
  };
  answer.then(
    (value) => reply({ id, ok: true, value }),
    (error: unknown) => {
      const code = elicitErrorCode(error);
      reply(code ? { id, ok: false, error: errorMessage(error), code } : { id, ok: false, error: errorMessage(error) });
    },
  );
}
