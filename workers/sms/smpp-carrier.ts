import type { CarrierConfig } from '../../lib/carriers-file';
import { HermodError } from '../../lib/errors';
import type { Logger } from '../../lib/log';
import { rateLimitedWarning } from '../../lib/rate-limited-warning';
import { carrierBindsUp, carrierSubmits, carrierWindowInUse, receiptLatency, smppBindUp, smppSubmits, smppWindowInUse } from '../../lib/metrics';
import type { OutboundJob } from '../../core/ports/bus-payloads';
import type { CarrierSnapshot } from '../../core/ports/carrier-snapshot';
import type { Carrier, CarrierReport, Handover, InboundMessage } from '../carrier';
import { isHeldBack, withTakenParts } from '../carrier';
import { UncertainSendError } from '../uncertain-send-error';
import { CommandStatus } from '../carriers/smpp/command-status';
import { MoAssembler } from '../carriers/smpp/mo-assembler';
import { createSmppClient, type DeliveryReceipt, type SmppClient } from '../carriers/smpp/smpp-client';
import { planSms, withMessageClass } from '../../core/domain/sms-segments';
import { FifoMap } from '../../lib/fifo-map';
import { canonicalCarrierId, receiptIdAsSubmitId } from './carrier-message-id';
import { STATUS_BY_RECEIPT } from './receipt-status';
import { querySmpp } from './smpp-query';
import { smppStatusOf } from './smpp-status';

const MAX_TRACKED = 200_000;
const BOUND = Promise.resolve();

/** An SMS carrier over its SMPP binds, as the routed carrier sees it. */
export interface SmppCarrier extends Carrier {
  readonly binds: number;
  readonly bindsUp: number;
  readonly windowInUse: number;
  /** Each bind's state for the operator console: up, window, accepted submits per second since the last call, last error. */
  snapshots(): CarrierSnapshot[];
  /** Always there: an SMSC is asked with query_sm (smpp-query.ts). */
  query(job: OutboundJob, carrierIds: readonly string[]): Promise<CarrierReport[]>;
}

// Where callers have always read a submit's (and now a query's) command_status from.
export { smppStatusOf };

export const isThrottled = (err: unknown): boolean => smppStatusOf(err) === CommandStatus.ESME_RTHROTTLED;

/**
 * How long the parts of a long message the carrier did not take yet are tried
 * again, once it took some: within a worker's stop (HERMOD_SHUTDOWN_GRACE, 10 s
 * by default), so a stop never cuts it off and hands the whole message to
 * another worker to send again; then it ends frozen, never resent on its own.
 */
const PART_RETRY_MS = 8_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Submits again, on whichever bind of the carrier is up, the parts of a long
 * message it has not taken (`ids[i]` undefined), as they were, backing off
 * 50 ms doubling to 5 s, until each is taken. A part refused for good (or
 * still not taken after PART_RETRY_MS) ends the message: it is not routed
 * again, since the carrier has the other parts.
 */
async function completeParts(
  segments: readonly Buffer[],
  ids: (string | undefined)[],
  first: PromiseSettledResult<unknown>[],
  submitPart: (on: SmppClient, shortMessage: Buffer, withHoldBack: boolean) => Promise<{ messageId: string }>,
  failed: (err: unknown) => void,
  counted: (results: { messageId: string }[]) => string[],
  pick: () => SmppClient | undefined,
): Promise<string[]> {
  const partName = (i: number) => `part ${i + 1} of ${segments.length}`;
  let last: unknown = (first.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
  const refusedForGood = (i: number, err: unknown): HermodError =>
    new HermodError('carrier_rejected', `${partName(i)} refused by the carrier: ${(err as Error).message}`, { retryable: false, cause: err });
  first.forEach((r, i) => {
    if (r.status === 'rejected' && (r.reason as { retryable?: boolean }).retryable !== true && !isHeldBack(r.reason)) throw refusedForGood(i, r.reason);
  });
  const deadline = Date.now() + PART_RETRY_MS;
  for (let delay = 50; ; delay = Math.min(5000, delay * 2)) {
    const missing = ids.flatMap((id, i) => (id === undefined ? [i] : []));
    if (missing.length === 0) return ids as string[];
    if (Date.now() + delay > deadline)
      throw new UncertainSendError(
        `${missing.map(partName).join(', ')} not taken by the carrier in ${PART_RETRY_MS / 1000} s, the others were: ${(last as Error).message}`,
        { cause: last },
      );
    await sleep(delay);
    const on = pick();
    if (!on) continue;
    const again = await Promise.allSettled(missing.map((i) => submitPart(on, segments[i]!, false)));
    // Every part taken in this round is noted before a refusal ends the message: its receipt will come.
    let refused: HermodError | undefined;
    again.forEach((r, k) => {
      const i = missing[k]!;
      if (r.status === 'fulfilled') ids[i] = counted([r.value])[0];
      else {
        failed(r.reason);
        last = r.reason;
        if ((r.reason as { retryable?: boolean }).retryable !== true) refused ??= refusedForGood(i, r.reason);
      }
    });
    if (refused) throw refused;
  }
}

/**
 * SMS over one carrier's SMPP 3.4 transceiver binds: each message split into
 * its segments, all submitted in order on the bind with the most room.
 */
export function createSmppCarrier(config: CarrierConfig, log: Logger): SmppCarrier {
  const carrier = config.name;
  const reportListeners: ((r: CarrierReport) => void | Promise<void>)[] = [];
  const inboundListeners: ((m: InboundMessage) => void)[] = [];
  // When each carrier id was acknowledged, for the receipt latency histogram.
  const submittedAt = new FifoMap<string, number>();
  const up = carrierBindsUp.labels({ carrier });
  up.set(0);
  let bindsUp = 0;

  interface BindStats {
    lastError: string;
    lastErrorAt: number;
    accepted: number;
    sampled: { accepted: number; at: number };
  }
  const clients: { client: SmppClient; bind: string; stats: BindStats; submits: boolean }[] = [];
  // The sessions of each bind: one transceiver, or a transmitter beside a receiver.
  const sessions: readonly ('transceiver' | 'transmitter' | 'receiver')[] =
    config.bindMode === 'transmitter_receiver' ? ['transmitter', 'receiver'] : ['transceiver'];
  // The windows are read at each scrape: they change twice a submit.
  const unwatch: (() => void)[] = [];
  // An SMSC hands each deliver_sm to any receiving bind: the parts of one long reply may come on several.
  const moAssembler = new MoAssembler(undefined, config.countryCode);
  // Once a minute, with how many: a Redis away for a second or two fails every receipt meanwhile (2,113 lines in a trial).
  const receiptNotRecorded = rateLimitedWarning(log, 'delivery receipt not recorded; the SMSC will send it again', { count: 'receipts' });
  for (let n = 0; n < config.binds * sessions.length; n++) {
    const i = Math.floor(n / sessions.length);
    const bindAs = sessions[n % sessions.length]!;
    const submits = bindAs !== 'receiver';
    const bind = `${config.systemId}@${config.host}:${config.port}${i === 0 ? '' : `#${i + 1}`}${bindAs === 'receiver' ? '/receiver' : ''}`;
    const client = createSmppClient({
      bindAs,
      host: config.host,
      port: config.port,
      systemId: config.systemId,
      password: config.password,
      systemType: config.systemType,
      windowSize: config.windowSize,
      enquireLinkMs: config.enquireLinkMs,
      submitTimeoutMs: config.submitTimeoutMs,
      answerWaitMs: config.answerWaitMs,
      reconnectMinMs: config.reconnectMinMs,
      reconnectMaxMs: config.reconnectMaxMs,
      moAssembler,
      log,
    });
    const stats: BindStats = { lastError: '', lastErrorAt: 0, accepted: 0, sampled: { accepted: 0, at: Date.now() } };
    const failed = (reason: string): void => {
      stats.lastError = reason;
      stats.lastErrorAt = Date.now();
    };
    clients.push({ client, bind, stats, submits });
    unwatch.push(smppWindowInUse.watch({ bind }, () => client.windowInUse));
    // Down until the first bind, so a carrier that never binds shows as down.
    const bindUp = smppBindUp.labels({ bind });
    bindUp.set(0);
    let isUp = false;
    const setUp = (now: boolean) => {
      // What the carrier counts as up is what it can send on; a receiver's state shows in its own bind gauge.
      if (now !== isUp && submits) bindsUp += now ? 1 : -1;
      isUp = now;
      bindUp.set(now ? 1 : 0);
      up.set(bindsUp);
    };
    client.on('bound', (e) => {
      setUp(true);
      log.info('SMPP bound', { carrier, bind, smsc: e.systemId });
    });
    client.on('disconnected', (e) => {
      setUp(false);
      if (e.closed) return log.info('SMPP unbound', { carrier, bind, failedSubmits: e.failed });
      failed(`disconnected: ${e.reason}`);
      log.warn('SMPP disconnected', { carrier, bind, reason: e.reason, failedSubmits: e.failed });
    });
    // Once a minute at most per bind: a slow SMSC answers many submits late.
    let slowToldAt = 0;
    client.on('slowAnswer', (e) => {
      if (Date.now() - slowToldAt < 60_000) return;
      slowToldAt = Date.now();
      log.warn('SMSC slow to answer submits; waiting for the answers rather than sending again', {
        carrier,
        bind,
        waitingLate: e.waiting,
        afterMs: e.waitingMs,
        answerWaitMs: config.answerWaitMs,
      });
    });
    client.on('bindFailed', (e) => {
      setUp(false);
      failed(`bind failed: ${e.reason}${e.status === undefined ? '' : ` (command_status ${e.status})`}`);
      log.warn('SMPP bind failed', { carrier, bind, reason: e.reason, status: e.status });
    });
    client.on('receipt', (r: DeliveryReceipt, settle) => {
      const status = STATUS_BY_RECEIPT[r.state];
      if (!status) return settle(true);
      const carrierId = receiptIdAsSubmitId(r.carrierMessageId, r.idWrittenAs === 'submit' ? config.submitIds : config.receiptIds, config.submitIds);
      const at = submittedAt.get(carrierId);
      if (at !== undefined) {
        submittedAt.delete(carrierId);
        receiptLatency.observe((Date.now() - at) / 1000);
      }
      const errorCode = r.errorCode === '000' ? '' : r.errorCode;
      // What the version before ids were compared as numbers kept: the id as written, converted only between bases.
      const asWritten =
        config.idPrefix +
        (config.receiptIds === config.submitIds ? r.carrierMessageId : receiptIdAsSubmitId(r.carrierMessageId, config.receiptIds, config.submitIds));
      const report: CarrierReport = {
        carrierId: config.idPrefix + carrierId,
        ...(asWritten !== config.idPrefix + carrierId ? { carrierIdAsWritten: asWritten } : {}),
        status,
        at: Date.now(),
        errorCode,
        // The code alone tells a client nothing: its meaning beside it, where hermod knows it.
        ...(errorCode && r.errorMeaning ? { detail: `${errorCode}: ${r.errorMeaning}` } : {}),
      };
      // One listener (the channel worker) in practice: its promise alone, without gathering several.
      const recorded = reportListeners.length === 1 ? Promise.resolve(reportListeners[0]!(report)) : Promise.all(reportListeners.map((l) => l(report)));
      recorded.then(
        () => settle(true),
        (err: unknown) => {
          receiptNotRecorded({ err, carrier, carrierId });
          settle(false);
        },
      );
    });
    client.on('mo', (m) => {
      const message: InboundMessage = { source: m.source, destination: m.destination, text: m.text, at: Date.now(), carrierRef: m.carrierRef };
      for (const l of inboundListeners) l(message);
    });
  }

  const windowInUse = (): number => clients.reduce((n, c) => n + c.client.windowInUse, 0);
  unwatch.push(carrierWindowInUse.watch({ carrier }, windowInUse));
  let closed = false;
  const room = (x: SmppClient): number => x.windowInUse + x.queueLength;
  /** The bound client with the most room, or undefined when every bind is down. */
  const pickClient = (): (typeof clients)[number] | undefined => {
    let best: (typeof clients)[number] | undefined;
    for (const c of clients) {
      if (c.submits && c.client.isBound && (!best || room(c.client) < room(best.client))) best = c;
    }
    return best;
  };

  return {
    name: carrier,
    binds: config.binds,
    get bindsUp() {
      return bindsUp;
    },
    get windowInUse() {
      return windowInUse();
    },
    async send(job: OutboundJob, onWritten?: () => void, handover?: Handover) {
      const picked = pickClient();
      if (!picked) throw new HermodError('unavailable', `no bind to carrier ${carrier} is up`, { retryable: true });
      const { client, stats } = picked;
      const holdBack = handover?.holdBack;
      const plan = planSms(job.content);
      const dataCoding = withMessageClass(plan.dataCoding, job.smsClass);
      let written = false;
      // Asked once, for the first part: the parts behind it follow it out, or are withdrawn with it.
      let held: boolean | undefined;
      const holdOnce = holdBack && ((): boolean => (held ??= holdBack()));
      const submitPart = (on: SmppClient, shortMessage: Buffer, withHoldBack: boolean) =>
        on.submit({
          source: job.source,
          destination: job.destination,
          shortMessage,
          dataCoding,
          esmClass: plan.esmClass,
          registeredDelivery: 1,
          sourceTon: config.sourceTon,
          sourceNpi: config.sourceNpi,
          holdBack: withHoldBack ? holdOnce : undefined,
          onSent: () => {
            if (!written) {
              written = true;
              onWritten?.();
            }
          },
        });
      const counted = (results: { messageId: string }[]): string[] => {
        smppSubmits.inc({ outcome: 'accepted' }, results.length);
        carrierSubmits.inc({ carrier, outcome: 'accepted' }, results.length);
        stats.accepted += results.length;
        return results.map((r) => canonicalCarrierId(r.messageId, config.submitIds));
      };
      const failed = (err: unknown): void => {
        const retryable = (err as { retryable?: boolean }).retryable;
        smppSubmits.inc({ outcome: retryable ? 'transient' : 'rejected' });
        carrierSubmits.inc({ carrier, outcome: isThrottled(err) ? 'throttled' : retryable ? 'error' : 'rejected' });
        stats.lastError = `submit failed: ${(err as Error).message}`;
        stats.lastErrorAt = Date.now();
      };
      const done = (ids: string[]) => {
        const now = Date.now();
        for (const id of ids) submittedAt.set(id, now);
        while (submittedAt.size > MAX_TRACKED) submittedAt.shift();
        return { carrierIds: ids.map((id) => config.idPrefix + id) };
      };

      if (plan.segments.length === 1) {
        // One part, as most messages are: its answer alone, without settling several (what follows does the same for one).
        try {
          return done(counted([await submitPart(client, plan.segments[0]!, true)]));
        } catch (err) {
          if (!isHeldBack(err)) failed(err);
          throw err;
        }
      }
      const first = await Promise.allSettled(plan.segments.map((segment) => submitPart(client, segment, true)));
      const ids: (string | undefined)[] = first.map((r) => (r.status === 'fulfilled' ? counted([r.value])[0] : undefined));
      const refused = first.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      if (refused.length === 0) return done(ids as string[]);
      // Withdrawn unsent on purpose (a paused campaign, the submit limit): normal flow, no submit failed.
      if (refused.some(isHeldBack) && ids.every((id) => id === undefined)) throw refused.find(isHeldBack);
      for (const err of refused) if (!isHeldBack(err)) failed(err);
      // None taken: the whole message may be routed and submitted again (unless a part was refused for good).
      if (ids.every((id) => id === undefined)) throw refused.find((e) => (e as { retryable?: boolean }).retryable !== true) ?? refused[0];
      // Some parts are with the carrier: only the others are submitted again, exactly as they were (the same
      // concatenation reference), or the handset would get the taken ones twice, one copy an orphan fragment.
      try {
        return done(await completeParts(plan.segments, ids, first, submitPart, failed, counted, () => pickClient()?.client));
      } catch (err) {
        // The message fails, but the parts taken are with the carrier: their receipts will come.
        throw withTakenParts(
          err,
          ids.flatMap((id) => (id === undefined ? [] : [config.idPrefix + id])),
          plan.segments.length,
        );
      }
    },
    query: (job, carrierIds) => querySmpp(config, pickClient()?.client, job, carrierIds, log),
    // Asked before every send: a bind that is up answers without a promise of its own.
    ready: () =>
      !closed && clients.some((c) => c.submits && c.client.isBound)
        ? BOUND
        : Promise.any(clients.filter((c) => c.submits).map((c) => c.client.ready())).catch(() =>
            Promise.reject(new HermodError('unavailable', `carrier ${carrier} is closed`)),
          ),
    snapshots() {
      const now = Date.now();
      return clients.map(({ client, bind, stats, submits }) => {
        const seconds = Math.max(0.001, (now - stats.sampled.at) / 1000);
        const submitsPerSecond = Math.round(((stats.accepted - stats.sampled.accepted) / seconds) * 10) / 10;
        stats.sampled = { accepted: stats.accepted, at: now };
        return {
          channel: 'sms',
          bind: `${carrier} ${bind}`,
          up: client.isBound,
          windowInUse: client.windowInUse,
          windowSize: submits ? config.windowSize : 0,
          submitsPerSecond,
          lastError: stats.lastError,
          lastErrorAt: stats.lastErrorAt,
        };
      });
    },
    onReport: (l) => void reportListeners.push(l),
    onInbound: (l) => void inboundListeners.push(l),
    async close() {
      closed = true;
      // Transmitters first: while they drain, receipts and the rest of long replies still come on the receivers.
      await Promise.all(clients.filter((c) => c.submits).map((c) => c.client.close()));
      await Promise.all(clients.filter((c) => !c.submits).map((c) => c.client.close()));
      // A bind closed on purpose is not a bind down.
      for (const c of clients) smppBindUp.remove({ bind: c.bind });
      carrierBindsUp.remove({ carrier });
      for (const u of unwatch) u();
    },
  };
}
