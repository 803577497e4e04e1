import { HermodError } from '../../../lib/errors';
import { UnansweredRequestError } from './unanswered-request-error';

const REQUEST_TIMEOUT_MS = 10_000;

/** Failures that happen before a request can have reached the peer: nothing was sent, so sending again is safe. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export interface JsonAnswer {
  status: number;
  ok: boolean;
  /** The parsed body; undefined when it was empty or not JSON. */
  body: unknown;
}

/**
 * POSTs `body` as JSON with a bearer token and reads the JSON answer, whatever
 * its status: each carrier decides what an answer means. Only a failure to
 * get an answer at all (refused, reset, timed out) throws, as a retryable
 * carrier_transient naming `peer` ("WhatsApp unreachable: …"); an
 * UnansweredRequestError when the request may have reached the peer (a
 * timeout, a connection dropped mid-way), so the caller can tell the two apart.
 */
export async function postJson(url: string, request: { peer: string; token: string; body: unknown; timeoutMs?: number }): Promise<JsonAnswer> {
  return requestJson(url, { ...request, method: 'POST' });
}

/** GETs `url` with a bearer token and reads the JSON answer, as postJson does. */
export async function getJson(url: string, request: { peer: string; token: string; timeoutMs?: number }): Promise<JsonAnswer> {
  return requestJson(url, { ...request, method: 'GET' });
}

async function requestJson(url: string, request: { peer: string; token: string; body?: unknown; timeoutMs?: number; method: string }): Promise<JsonAnswer> {
  try {
    const res = await fetch(url, {
      method: request.method,
      headers: { authorization: `Bearer ${request.token}`, ...(request.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(request.timeoutMs ?? REQUEST_TIMEOUT_MS),
    });
    const body: unknown = await res.json().catch(() => undefined);
    return { status: res.status, ok: res.ok, body };
  } catch (err) {
    const message = `${request.peer} unreachable: ${describe(err)}`;
    if (NOT_SENT.has(causeCode(err))) throw new HermodError('carrier_transient', message, { cause: err });
    throw new UnansweredRequestError(`${request.peer} did not answer: ${describe(err)}`, { cause: err });
  }
}

/** The system or undici code under fetch's "fetch failed" (ECONNREFUSED, UND_ERR_SOCKET), '' when none. */
function causeCode(err: unknown): string {
  const cause = err instanceof Error ? (err.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : '';
}

/** fetch's "fetch failed" says little; its cause (ECONNREFUSED, a timeout) says what happened. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
