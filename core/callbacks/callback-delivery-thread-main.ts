import { parentPort } from 'node:worker_threads';
import { toHermodError } from '../../lib/errors';
import { deliverCallback } from './callback-sender';
import { type DeliveryAnswer, decodeRequests, encodeAnswers } from './callback-delivery-wire';

/** One delivery thread: POSTs what it is handed (in batches) and answers with the outcomes (in batches). */

// Answers that come in one turn go back as one message (see the pool).
let answers: DeliveryAnswer[] = [];
const answer = (a: DeliveryAnswer): void => {
  if (answers.length === 0)
    setImmediate(() => {
      const batch = answers;
      answers = [];
      parentPort!.postMessage(encodeAnswers(batch));
    });
  answers.push(a);
};

parentPort!.on('message', (flat: unknown[]) => {
  for (const req of decodeRequests(flat)) {
    deliverCallback(req).then(
      (res) => answer({ ref: req.ref, ok: true, status: res.status, ...(res.rateLimit !== undefined ? { rateLimit: res.rateLimit } : {}) }),
      (err: unknown) => {
        const e = toHermodError(err);
        answer({
          ref: req.ref,
          ok: false,
          code: e.code,
          message: e.message,
          retryable: e.retryable,
          ...(e.retryAfterSeconds !== undefined ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
        });
      },
    );
  }
});
parentPort!.postMessage({ ready: true });
