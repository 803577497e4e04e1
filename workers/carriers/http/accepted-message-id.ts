import { HermodError } from '../../../lib/errors';
import type { Logger } from '../../../lib/log';
import type { JsonAnswer } from './post-json';

/**
 * The id a carrier gave a message it accepted (`id`, read from `answer`).
 * Accepted but unreadable: retrying could send twice, so the message is given
 * up as carrier_rejected. `peer` names the carrier ("WhatsApp", "the MMS provider").
 */
export function acceptedMessageId(id: unknown, answer: JsonAnswer, context: { peer: string; jobId: string; log: Logger }): string {
  if (typeof id === 'string' && id) return id;
  context.log.warn(`${context.peer} accepted a message without an id`, { id: context.jobId, status: answer.status });
  throw new HermodError('carrier_rejected', `${context.peer} answered HTTP ${answer.status} without a message id`);
}
