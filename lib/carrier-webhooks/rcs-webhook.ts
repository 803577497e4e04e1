import { hmacMatches, sameToken, signatureHeader } from './signature-header';
import type { ReportedStatus, WebhookHandler, WebhookReport } from './webhook-handler';

const STATUS = new Map<string, ReportedStatus>([
  ['DELIVERED', 'received'],
  ['READ', 'read'],
  // The platform revoked a message nobody received within its time to live.
  ['TTL_EXPIRATION_REVOKED', 'expired'],
]);

/**
 * RBM webhooks. RBM posts Pub/Sub push envelopes
 * `{message: {data: base64(event JSON), messageId, publishTime}}` and signs
 * the decoded `data` with HMAC-SHA512 keyed by the client token, base64, in
 * `X-Goog-Signature`; a signature over the whole raw body is accepted too,
 * and then so is an unwrapped event. Events are RBM's flat user events
 * (`{eventType, messageId, sendTime, senderPhoneNumber}`) or the same inside
 * `agentEvent`; anything else (user messages, typing) is skipped.
 *
 * When a webhook URL is configured, RBM first POSTs
 * `{"clientToken": "…", "secret": "…"}` (unsigned); a webhook that knows the
 * client token answers 200 with the secret as its body, and one with another
 * token is refused as such (not as a signature that does not match).
 */
export const rcsWebhook: WebhookHandler = {
  verify(rawBody, headers, secret) {
    const signature = signatureHeader(headers, 'x-goog-signature');
    if (!secret || !/^[A-Za-z0-9+/]{86}==$/.test(signature)) return false;
    const given = Buffer.from(signature, 'base64');
    const matches = (signed: Buffer): boolean => hmacMatches('sha512', secret, signed, given);
    if (matches(rawBody)) return true;
    const data = envelopeData(parseJson(rawBody));
    return data !== undefined && matches(data);
  },

  handshake(body, secret) {
    if (!isRecord(body) || typeof body.clientToken !== 'string' || typeof body.secret !== 'string' || 'message' in body) return undefined;
    if (sameToken(body.clientToken, secret)) return { answer: body.secret };
    return {
      refused: secret
        ? 'RBM client token does not match the configured one (HERMOD_RCS_WEBHOOK_SECRET)'
        : 'no RBM client token is configured (HERMOD_RCS_WEBHOOK_SECRET is empty)',
    };
  },
  parse(body) {
    const data = envelopeData(body);
    // With an envelope only its data counts: that is what the signature covers.
    const event = isRecord(body) && 'message' in body ? (data ? parseJson(data) : undefined) : body;
    if (!isRecord(event)) return [];
    const e = isRecord(event.agentEvent) ? event.agentEvent : event;
    const status = typeof e.eventType === 'string' ? STATUS.get(e.eventType) : undefined;
    if (!status || typeof e.messageId !== 'string' || !e.messageId) return [];
    const publishTime = isRecord(body) && isRecord(body.message) ? body.message.publishTime : undefined;
    const report: WebhookReport = { carrierId: e.messageId, status, at: time(e.sendTime) ?? time(publishTime) ?? Date.now(), errorCode: '' };
    return [report];
  },
};

function envelopeData(body: unknown): Buffer | undefined {
  if (!isRecord(body) || !isRecord(body.message) || typeof body.message.data !== 'string') return undefined;
  return Buffer.from(body.message.data, 'base64');
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

function time(v: unknown): number | undefined {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
