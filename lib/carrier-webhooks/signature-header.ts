import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookHeaders } from './webhook-handler';

/** The value of a signature header, its name matched without regard to case; a missing or repeated header is ''. */
export function signatureHeader(headers: WebhookHeaders, name: string): string {
  const value = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  if (Array.isArray(value)) return value.length === 1 ? value[0]! : '';
  return value ?? '';
}

/** Whether `given` is the HMAC of `signed` keyed with `secret`, compared in constant time. */
export function hmacMatches(algorithm: 'sha256' | 'sha512', secret: string, signed: Buffer, given: Buffer): boolean {
  const expected = createHmac(algorithm, secret).update(signed).digest();
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * Verifies a `sha256=<hex HMAC-SHA256 of the raw body>` header (WhatsApp's
 * X-Hub-Signature-256, the MMS provider's X-Signature); a missing, repeated or
 * garbled header and an empty secret never verify.
 */
export function verifySha256SignatureHeader(rawBody: Buffer, headers: WebhookHeaders, name: string, secret: string): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(signatureHeader(headers, name));
  if (!match || !secret) return false;
  return hmacMatches('sha256', secret, rawBody, Buffer.from(match[1]!, 'hex'));
}

/** Whether a token given in a request is the configured one, compared in constant time; an empty one never matches. */
export function sameToken(given: string, secret: string): boolean {
  if (!secret) return false;
  const a = createHmac('sha256', 'same-token').update(given).digest();
  const b = createHmac('sha256', 'same-token').update(secret).digest();
  return timingSafeEqual(a, b);
}
