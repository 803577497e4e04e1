import { verifySha256SignatureHeader } from './signature-header';
import type { ReportedStatus, WebhookHandler, WebhookReport } from './webhook-handler';

const STATUS = new Map<string, ReportedStatus>([
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
    return verifySha256SignatureHeader(rawBody, headers, 'x-signature', secret);
  },

  parse(body) {
    const reports: WebhookReport[] = [];
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

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
