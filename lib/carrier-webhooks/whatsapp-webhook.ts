import { verifySha256SignatureHeader } from './signature-header';
import { whatsAppInbound } from './whatsapp-inbound';
import type { ReportedStatus, WebhookHandler, WebhookReport } from './webhook-handler';

const STATUS = new Map<string, ReportedStatus>([
  ['sent', 'sent'],
  ['delivered', 'received'],
  ['read', 'read'],
  ['failed', 'failed'],
]);

/**
 * Cloud API webhooks: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the
 * raw body, keyed with the app secret>`, and status changes inside
 * `entry[].changes[].value.statuses[]`; the handsets' own messages
 * (`value.messages`) are read by whatsapp-inbound.ts.
 */
export const whatsAppWebhook: WebhookHandler = {
  verify(rawBody, headers, secret) {
    return verifySha256SignatureHeader(rawBody, headers, 'x-hub-signature-256', secret);
  },

  inbound: whatsAppInbound,
  parse(body) {
    const reports: WebhookReport[] = [];
    if (!isRecord(body) || body.object !== 'whatsapp_business_account') return reports;
    for (const entry of records(body.entry)) {
      for (const change of records(entry.changes)) {
        if (change.field !== 'messages' || !isRecord(change.value)) continue;
        for (const s of records(change.value.statuses)) {
          const status = typeof s.status === 'string' ? STATUS.get(s.status) : undefined;
          if (!status || typeof s.id !== 'string' || !s.id) continue;
          const seconds = Number(s.timestamp);
          const error = status === 'failed' ? records(s.errors)[0] : undefined;
          const code = error?.code === undefined || error.code === null ? '' : String(error.code);
          reports.push({
            carrierId: s.id,
            status,
            at: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now(),
            errorCode: code,
            ...(error ? { detail: failureDetail(code, error) } : {}),
          });
        }
      }
    }
    return reports;
  },
};

/** Meta's words for a failure, its code first: '131026: Message undeliverable (Message could not be delivered)'. */
function failureDetail(code: string, error: Record<string, unknown>): string {
  const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
  const title = text(error.title) || text(error.message);
  const details = isRecord(error.error_data) ? text(error.error_data.details) : '';
  const same = (a: string, b: string): boolean => a.replace(/[.!]+$/, '').toLowerCase() === b.replace(/[.!]+$/, '').toLowerCase();
  const words = [title, details && !same(details, title) ? `(${details})` : ''].filter(Boolean).join(' ');
  return [code, words].filter(Boolean).join(': ');
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const records = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
