import { HermodError } from '../../../lib/errors';

/**
 * A request that went out (or may have) and got no answer: timed out, or the
 * connection dropped after it was written. The carrier may have acted on it;
 * retryable, but a carrier where a repeat means a second message reconciles
 * first (mms-carrier.ts) or refuses to resend (whatsapp-carrier.ts).
 */
export class UnansweredRequestError extends HermodError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('carrier_transient', message, { cause: options.cause });
    this.name = 'UnansweredRequestError';
  }
}
