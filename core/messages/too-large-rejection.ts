import { toHermodError } from '../../lib/errors';
import type { StatusChange } from './status-recorder';

/**
 * The status that ends a message, or an Intelligent Messaging attempt, that
 * its channel's bus refused as too large: `rejected`, error code
 * `body_too_large`, the bus's reason as detail (at most 255 characters).
 */
export function tooLargeRejection(m: { id: string; applicationId: string; channel: string }, failure: unknown): StatusChange {
  return {
    messageId: m.id,
    applicationId: m.applicationId,
    channel: m.channel,
    status: 'rejected',
    at: Date.now(),
    errorCode: 'body_too_large',
    detail: `too large for the ${m.channel} channel's message bus: ${toHermodError(failure).message}`.slice(0, 255),
  };
}
