import { HermodError } from '../lib/errors';

/**
 * A send the carrier may have taken although no answer came (a timeout after
 * the request went out), on a carrier that cannot be asked by our id. Sending
 * again could deliver twice, so the worker does not retry it: the message is
 * frozen with error code `uncertain` for an operator to look at.
 */
export class UncertainSendError extends HermodError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('carrier_transient', message, { retryable: false, cause: options.cause });
    this.name = 'UncertainSendError';
  }
}
