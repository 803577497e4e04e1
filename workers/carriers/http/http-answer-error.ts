import { HermodError } from '../../../lib/errors';

/**
 * A carrier's failed HTTP answer as a HermodError: carrier_transient (retried)
 * for 408, 429 and 5xx, or when the carrier's own error code says to try
 * again later (`retryLater`); carrier_rejected (given up) for anything else.
 */
export function httpAnswerError(httpStatus: number, message: string, retryLater = false): HermodError {
  const retryable = retryLater || httpStatus === 408 || httpStatus === 429 || httpStatus >= 500;
  return new HermodError(retryable ? 'carrier_transient' : 'carrier_rejected', message);
}
