import { HermodError } from '../../../lib/errors';

const REQUEST_TIMEOUT_MS = 10_000;

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
 * carrier_transient naming `peer` ("WhatsApp unreachable: …").
 */
export async function postJson(url: string, request: { peer: string; token: string; body: unknown }): Promise<JsonAnswer> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${request.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body: unknown = await res.json().catch(() => undefined);
    return { status: res.status, ok: res.ok, body };
  } catch (err) {
    throw new HermodError('carrier_transient', `${request.peer} unreachable: ${describe(err)}`, { cause: err });
  }
}

/** fetch's "fetch failed" says little; its cause (ECONNREFUSED, a timeout) says what happened. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
