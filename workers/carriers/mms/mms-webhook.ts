import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MessageStatus } from '../../../core/domain/message-status';
import type { CarrierReport } from '../../carrier';
import type { WebhookHandler, WebhookHeaders } from '../webhooks';

const STATUS = new Map<string, MessageStatus>([
  ['sent', 'sent'],
  ['delivered', 'received'],
  ['failed', 'failed'],
  ['expired', 'expired'],
]);

/**
 * The MMS provider's delivery reports (the contract in mms-carrier.ts):
 *
 *   POST {the webhook URL set at the provider}
 *   X-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the shared secret>
 *   {"id": "…", "status": "sent" | "delivered" | "failed" | "expired",
 *    "timestamp": "2025-01-01T12:00:00Z", "error_code"?: "…"}
 *
 * A JSON array of such reports is taken too.
 */
export const mmsWebhook: WebhookHandler = {
  verify(rawBody, headers, secret) {
    const match = /^sha256=([0-9a-f]{64})$/i.exec(header(headers, 'x-signature'));
    if (!match || !secret) return false;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
  },

  parse(body) {
    const reports: CarrierReport[] = [];
    for (const r of Array.isArray(body) ? body : [body]) {
      if (!isRecord(r) || typeof r.id !== 'string' || !r.id) continue;
      const status = typeof r.status === 'string' ? STATUS.get(r.status) : undefined;
      if (!status) continue;
      const at = typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN;
      const errorCode = typeof r.error_code === 'string' || typeof r.error_code === 'number' ? String(r.error_code) : '';
      reports.push({ carrierId: r.id, status, at: Number.isFinite(at) ? at : Date.now(), errorCode });
    }
    return reports;
  },
};

/** One header value; a missing or repeated header is ''. */
function header(headers: WebhookHeaders, name: string): string {
  const value = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  if (Array.isArray(value)) return value.length === 1 ? value[0]! : '';
  return value ?? '';
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
