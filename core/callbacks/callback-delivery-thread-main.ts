import { parentPort } from 'node:worker_threads';
import { toHermodError } from '../../lib/errors';
import { deliverCallback, type SignedDelivery } from './callback-sender';

/** One delivery thread: POSTs what it is handed (in batches) and answers with the outcomes (in batches). */
export interface DeliveryRequest extends SignedDelivery {
  ref: number;
}

export type DeliveryAnswer =
  | { ref: number; ok: true; status: number; rateLimit?: number }
  | { ref: number; ok: false; code: string; message: string; retryable: boolean };

// Answers that come in one turn go back as one message (see the pool).
let answers: DeliveryAnswer[] = [];
const answer = (a: DeliveryAnswer): void => {
  if (answers.length === 0)
    setImmediate(() => {
      const batch = answers;
      answers = [];
      parentPort!.postMessage(batch);
    });
  answers.push(a);
};

parentPort!.on('message', (requests: DeliveryRequest[]) => {
  for (const req of requests) {
    deliverCallback(req).then(
      (res) => answer({ ref: req.ref, ok: true, status: res.status, rateLimit: res.rateLimit }),
      (err: unknown) => {
        const e = toHermodError(err);
        answer({ ref: req.ref, ok: false, code: e.code, message: e.message, retryable: e.retryable });
      },
    );
  }
});
parentPort!.postMessage({ ready: true });
