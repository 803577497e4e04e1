import { Worker } from 'node:worker_threads';
import { HermodError, isErrorCode } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { entryFile } from '../../lib/build-location';
import { deliverCallback, type SignedDelivery } from './callback-sender';
import { decodeAnswers, pushRequest } from './callback-delivery-wire';

export type Deliver = (d: SignedDelivery) => Promise<{ status: number; rateLimit?: number }>;

/**
 * Delivers callbacks on worker threads: the HTTP client, the socket writes and
 * the HMAC of thousands of callbacks a second stay off the thread that
 * accepts messages and records statuses. With 0 threads, or if a thread
 * cannot start, delivery runs on the calling thread.
 */
export async function startCallbackDeliveryPool(threads: number, log: Logger): Promise<{ deliver: Deliver; stop(): Promise<void> }> {
  const workers: Worker[] = [];
  const pending = new Map<number, { resolve: (v: { status: number; rateLimit?: number }) => void; reject: (e: unknown) => void }>();
  let ref = 0;
  for (let i = 0; i < threads; i++) {
    try {
      const worker = new Worker(entryFile('callback-delivery-thread-main', 'core/callbacks/callback-delivery-thread.js'));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the thread did not start in 20 s')), 20_000);
        worker.once('error', (err) => (clearTimeout(timer), reject(err)));
        worker.once('message', () => (clearTimeout(timer), resolve()));
      });
      worker.on('message', (flat: unknown[]) => {
        for (const answer of decodeAnswers(flat)) {
          const waiting = pending.get(answer.ref);
          if (!waiting) continue;
          pending.delete(answer.ref);
          if (answer.ok) waiting.resolve({ status: answer.status, ...(answer.rateLimit !== undefined ? { rateLimit: answer.rateLimit } : {}) });
          else
            waiting.reject(
              new HermodError(isErrorCode(answer.code) ? answer.code : 'unavailable', answer.message, {
                retryable: answer.retryable,
                retryAfterSeconds: answer.retryAfterSeconds,
              }),
            );
        }
      });
      worker.on('error', (err) => log.error('callback delivery thread failed', { err }));
      worker.unref();
      workers.push(worker);
    } catch (err) {
      log.warn('callback delivery threads unavailable; delivering on the main thread', { err });
      break;
    }
  }
  if (workers.length === 0) return { deliver: deliverCallback, stop: async () => undefined };
  // What one synchronous run hands over goes to each thread as one message: a message costs about
  // as much as a callback's own HTTP, so one per callback spent a third of the dispatcher's time.
  const outgoing: unknown[][] = workers.map(() => []);
  const flush = (): void => {
    outgoing.forEach((requests, i) => {
      if (requests.length === 0) return;
      outgoing[i] = [];
      workers[i]!.postMessage(requests);
    });
  };
  let next = 0;
  return {
    deliver(d) {
      const id = ++ref;
      const batch = outgoing[next++ % workers.length]!;
      if (outgoing.every((requests) => requests.length === 0)) queueMicrotask(flush);
      pushRequest(batch, id, d);
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
      });
    },
    async stop() {
      // Deliveries in flight finish first (the dispatcher has stopped taking new ones).
      const deadline = Date.now() + 5000;
      while (pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
