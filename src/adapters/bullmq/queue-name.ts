import { RemoteErrors } from '../../core/errors.ts';
import { ToolpoolTypeError } from '../../core/error-codes.ts';

/** A BullMQ queue name: BullMQ refuses ':' (its key separator); toolpool's own keys embed it too, so it is bounded. */
export function checkQueueName(fn: string, queue: unknown): string {
  if (typeof queue !== 'string' || queue === '' || queue.length > 200 || queue.includes(':')) {
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      RemoteErrors.badOption(fn, 'queue', 'must be a name of 1-200 characters without ":"'),
    );
  }
  return queue;
}
