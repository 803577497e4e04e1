import type { SmppConfig } from '../../lib/config';
import type { Logger } from '../../lib/log';
import { receiptLatency, smppBindUp, smppSubmits, smppWindowInUse } from '../../lib/metrics';
import type { MessageStatus } from '../../core/domain/message-status';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import type { Carrier, CarrierReport, InboundMessage } from '../carrier';
import { createSmppClient, type DeliveryReceipt, type ReceiptState } from '../carriers/smpp/smpp-client';
import { planSms } from '../../core/domain/sms-segments';

/** What each receipt state means for the message. `accepted` (en route) is not a change. */
const STATUS_BY_RECEIPT: Record<ReceiptState, MessageStatus | undefined> = {
  delivered: 'received',
  undeliverable: 'failed',
  expired: 'expired',
  rejected: 'rejected',
  deleted: 'dead',
  unknown: 'failed',
  accepted: undefined,
};

const MAX_TRACKED = 200_000;

/** SMS over one SMPP 3.4 transceiver bind: each message split into its segments, each submitted in order. */
export function createSmppCarrier(config: SmppConfig, log: Logger): Carrier {
  const bind = `${config.systemId}@${config.host}:${config.port}`;
  const client = createSmppClient({
    host: config.host,
    port: config.port,
    systemId: config.systemId,
    password: config.password,
    systemType: config.systemType,
    windowSize: config.windowSize,
    enquireLinkMs: config.enquireLinkMs,
    submitTimeoutMs: config.submitTimeoutMs,
    reconnectMinMs: config.reconnectMinMs,
    reconnectMaxMs: config.reconnectMaxMs,
    log,
  });
  const reportListeners: ((r: CarrierReport) => void | Promise<void>)[] = [];
  const inboundListeners: ((m: InboundMessage) => void)[] = [];
  // When each carrier id was acknowledged, for the receipt latency histogram.
  const submittedAt = new Map<string, number>();
  const window = smppWindowInUse.labels({ bind });
  // Down until the first bind, so a carrier that never binds shows as down.
  const up = smppBindUp.labels({ bind });
  up.set(0);

  client.on('bound', (e) => {
    up.set(1);
    log.info('SMPP bound', { bind, smsc: e.systemId });
  });
  client.on('disconnected', (e) => {
    up.set(0);
    log.warn('SMPP disconnected', { bind, reason: e.reason, failedSubmits: e.failed });
  });
  client.on('bindFailed', (e) => {
    up.set(0);
    log.warn('SMPP bind failed', { bind, reason: e.reason, status: e.status });
  });
  client.on('receipt', (r: DeliveryReceipt, settle) => {
    const status = STATUS_BY_RECEIPT[r.state];
    if (!status) return settle(true);
    const at = submittedAt.get(r.carrierMessageId);
    if (at !== undefined) {
      submittedAt.delete(r.carrierMessageId);
      receiptLatency.observe((Date.now() - at) / 1000);
    }
    const report: CarrierReport = { carrierId: r.carrierMessageId, status, at: Date.now(), errorCode: r.errorCode === '000' ? '' : r.errorCode };
    Promise.all(reportListeners.map((l) => l(report))).then(
      () => settle(true),
      (err: unknown) => {
        log.warn('delivery receipt not recorded; the SMSC will send it again', { err, carrierId: r.carrierMessageId });
        settle(false);
      },
    );
  });
  client.on('mo', (m) => {
    const message: InboundMessage = { source: m.source, destination: m.destination, text: m.text, at: Date.now(), carrierRef: m.carrierRef };
    for (const l of inboundListeners) l(message);
  });

  return {
    name: 'smpp',
    async send(job: OutboundJob, onWritten?: () => void, holdBack?: () => boolean) {
      const plan = planSms(job.content);
      let written = false;
      // Asked once, for the first part: the parts behind it follow it out, or are withdrawn with it.
      let held: boolean | undefined;
      const holdOnce = holdBack && ((): boolean => (held ??= holdBack()));
      const submits = plan.segments.map((shortMessage) =>
        client.submit({
          source: job.source,
          destination: job.destination,
          shortMessage,
          dataCoding: plan.dataCoding,
          esmClass: plan.esmClass,
          registeredDelivery: 1,
          holdBack: holdOnce,
          onSent: () => {
            window.set(client.windowInUse);
            if (!written) {
              written = true;
              onWritten?.();
            }
          },
        }),
      );
      try {
        const results = await Promise.all(submits);
        smppSubmits.inc({ outcome: 'accepted' }, results.length);
        const now = Date.now();
        for (const r of results) submittedAt.set(r.messageId, now);
        while (submittedAt.size > MAX_TRACKED) submittedAt.delete(submittedAt.keys().next().value as string);
        return { carrierIds: results.map((r) => r.messageId) };
      } catch (err) {
        smppSubmits.inc({ outcome: (err as { retryable?: boolean }).retryable ? 'transient' : 'rejected' });
        throw err;
      } finally {
        window.set(client.windowInUse);
      }
    },
    ready: () => client.ready(),
    onReport: (l) => void reportListeners.push(l),
    onInbound: (l) => void inboundListeners.push(l),
    async close() {
      await client.close();
      // A bind closed on purpose is not a bind down.
      smppBindUp.remove({ bind });
    },
  };
}
