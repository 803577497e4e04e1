import { parentPort } from 'node:worker_threads';
import { toHermodError } from '../../lib/errors';
import { deliverCallback, type SignedDelivery } from './callback-sender';

/** One delivery thread: POSTs what it is handed and answers with the outcome. */
export interface DeliveryRequest extends SignedDelivery {
  ref: number;
}

export type DeliveryAnswer =
  | { ref: number; ok: true; status: number; rateLimit?: number }
  | { ref: number; ok: false; code: string; message: string; retryable: boolean };

parentPort!.on('message', (req: DeliveryRequest) => {
  deliverCallback(req).then(
    (res) => parentPort!.postMessage({ ref: req.ref, ok: true, status: res.status, rateLimit: res.rateLimit } satisfies DeliveryAnswer),
    (err: unknown) => {
      const e = toHermodError(err);
      parentPort!.postMessage({ ref: req.ref, ok: false, code: e.code, message: e.message, retryable: e.retryable } satisfies DeliveryAnswer);
    },
  );
});
parentPort!.postMessage({ ready: true });
