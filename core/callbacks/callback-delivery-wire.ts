import type { SignedDelivery } from './callback-sender';

/** A callback handed to a delivery thread, with the number its answer comes back under. */
export interface DeliveryRequest extends SignedDelivery {
  ref: number;
}

export type DeliveryAnswer =
  | { ref: number; ok: true; status: number; rateLimit?: number }
  | { ref: number; ok: false; code: string; message: string; retryable: boolean; retryAfterSeconds?: number };

/**
 * Requests and answers cross between core's main thread and its delivery
 * threads as flat arrays of strings and numbers: the structured clone of
 * `postMessage` copies an object's property names with every object, and
 * a flat array of the same values costs about half (bench/RESULTS.md).
 */
const REQUEST_FIELDS = 9;
const ANSWER_FIELDS = 5;

/** Appends one request to a batch being made. */
export function pushRequest(out: unknown[], ref: number, d: SignedDelivery): void {
  out.push(
    ref,
    d.url,
    d.secret,
    d.eventId,
    d.body,
    d.allowPrivate ? -d.timeoutMs - 1 : d.timeoutMs,
    d.traceparent ?? '',
    d.previousSecret ?? '',
    d.eventAt ?? -1,
  );
}

export function encodeRequests(requests: readonly DeliveryRequest[]): unknown[] {
  const out: unknown[] = [];
  for (const r of requests) pushRequest(out, r.ref, r);
  return out;
}

export function decodeRequests(flat: readonly unknown[]): DeliveryRequest[] {
  const out: DeliveryRequest[] = [];
  for (let i = 0; i + REQUEST_FIELDS <= flat.length; i += REQUEST_FIELDS) {
    const timeout = flat[i + 5] as number;
    const traceparent = flat[i + 6] as string;
    const previousSecret = flat[i + 7] as string;
    const eventAt = flat[i + 8] as number;
    out.push({
      ref: flat[i] as number,
      url: flat[i + 1] as string,
      secret: flat[i + 2] as string,
      eventId: flat[i + 3] as string,
      body: flat[i + 4] as string,
      allowPrivate: timeout < 0,
      timeoutMs: timeout < 0 ? -timeout - 1 : timeout,
      ...(traceparent ? { traceparent } : {}),
      ...(previousSecret ? { previousSecret } : {}),
      ...(eventAt >= 0 ? { eventAt } : {}),
    });
  }
  return out;
}

export function encodeAnswers(answers: readonly DeliveryAnswer[]): unknown[] {
  const out: unknown[] = new Array(answers.length * ANSWER_FIELDS);
  let i = 0;
  for (const a of answers) {
    out[i++] = a.ref;
    if (a.ok) {
      out[i++] = 1;
      out[i++] = a.status;
      out[i++] = a.rateLimit ?? -1;
      out[i++] = 0;
    } else {
      out[i++] = 0;
      out[i++] = a.code;
      out[i++] = a.message;
      // 0 not retryable, 1 retryable, 2 + n retryable after n seconds (a receiver's Retry-After).
      out[i++] = !a.retryable ? 0 : a.retryAfterSeconds === undefined ? 1 : 2 + a.retryAfterSeconds;
    }
  }
  return out;
}

export function decodeAnswers(flat: readonly unknown[]): DeliveryAnswer[] {
  const out: DeliveryAnswer[] = [];
  for (let i = 0; i + ANSWER_FIELDS <= flat.length; i += ANSWER_FIELDS) {
    const ref = flat[i] as number;
    if (flat[i + 1] === 1) {
      const rateLimit = flat[i + 3] as number;
      out.push({ ref, ok: true, status: flat[i + 2] as number, ...(rateLimit >= 0 ? { rateLimit } : {}) });
    } else {
      const retry = flat[i + 4] as number;
      out.push({
        ref,
        ok: false,
        code: flat[i + 2] as string,
        message: flat[i + 3] as string,
        retryable: retry !== 0,
        ...(retry >= 2 ? { retryAfterSeconds: retry - 2 } : {}),
      });
    }
  }
  return out;
}
