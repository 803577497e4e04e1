import { inSpan } from '../../lib/tracing';
import type { CallbackJob } from './callback-job';

/**
 * One try of a callback as a client span, child of the span whose status
 * change made the job (the job carries its trace across the callbacks topic
 * and the outbox). A job without a trace (tracing off, or made before it was
 * on) is just tried.
 */
export function callbackSpan<T>(job: CallbackJob, attempt: () => Promise<T>): Promise<T> {
  if (!job.trace) return attempt();
  return inSpan(
    `callback ${job.kind}`,
    {
      kind: 'client',
      parent: job.trace,
      attributes: { 'http.request.method': 'POST', 'hermod.message_id': job.messageId, 'hermod.callback.attempt': job.attempt + 1 },
    },
    attempt,
  );
}
