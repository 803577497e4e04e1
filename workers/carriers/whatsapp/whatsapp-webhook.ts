import { createHmac, timingSafeEqual } from 'node:crypto';
import type { MessageStatus } from '../../../core/domain/message-status';
import type { CarrierReport } from '../../carrier';
import type { WebhookHandler, WebhookHeaders } from '../webhooks';

const STATUS = new Map<string, MessageStatus>([
  ['sent', 'sent'],
  ['delivered', 'received'],
  ['read', 'read'],
  ['failed', 'failed'],
]);

/**
 * Cloud API webhooks: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the
 * raw body, keyed with the app secret>`, and status changes inside
 * `entry[].changes[].value.statuses[]`. Inbound messages (`value.messages`)
 * are not handled yet and are skipped.
 */
export const whatsAppWebhook: WebhookHandler = {
  verify(rawBody, headers, secret) {
    const match = /^sha256=([0-9a-f]{64})$/i.exec(header(headers, 'x-hub-signature-256'));
    if (!match || !secret) return false;
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
  },

  parse(body) {
    const reports: CarrierReport[] = [];
    if (!isRecord(body) || body.object !== 'whatsapp_business_account') return reports;
    for (const entry of records(body.entry)) {
      for (const change of records(entry.changes)) {
        if (change.field !== 'messages' || !isRecord(change.value)) continue;
        for (const s of records(change.value.statuses)) {
          const status = typeof s.status === 'string' ? STATUS.get(s.status) : undefined;
          if (!status || typeof s.id !== 'string' || !s.id) continue;
          const seconds = Number(s.timestamp);
          const code = status === 'failed' ? records(s.errors)[0]?.code : undefined;
          reports.push({
            carrierId: s.id,
            status,
            at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now(),
            errorCode: code === undefined || code === null ? '' : String(code),
          });
        }
      }
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
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
