import { uuid } from '../../lib/uuid';
import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { MessageRecord, MessageHistory } from '../ports/message-history';
import type { OptOutStore } from '../ports/opt-out-store';
import type { HotState, LastMessage, ReplyContext } from '../ports/state';
import type { RecentMessages } from './recent-messages';
import { decodeInbound, decodeRecords } from '../ports/bus-payloads';
import type { Logger } from '../../lib/log';
import { asksToOptBackIn, keywordOf } from './reply-keywords';
import { replyAddressKey } from './reply-address';
import { handsetKey } from '../domain/handset-key';
import { startRoute } from './start-route';
import { routeReply } from './reply-router';
import { quotedMessages, type QuotingReply } from './quoted-messages';
import { firstDeliveries, inboundKey } from './inbound-dedup';
import { markRepliedRead } from './replies-as-read';
import { contextOfReply, createReplyContextFromHistory } from './reply-context-from-history';
import { clientReplyTo } from './client-reply-to';

/** How long a carrier's second delivery of the same reply is recognised (config moDedupWindowMs). */
const DEFAULT_DEDUP_WINDOW_MS = 10 * 60 * 1000;

/**
 * Core's side of the inbound topic: each reply (MO) is stored as a message of
 * direction MO for the application it answers, chosen by the address the
 * handset replied to (reply-router.ts; the rule is kept on the record as
 * `replyRoute`), with `replyTo` naming the message it answers. A carrier's
 * redelivery of the same reply is dropped. STOP-style replies opt the handset
 * out of that application only; START-style ones opt it back in. Replies come
 * from SMS (the SMPP workers) and WhatsApp (the gateway's webhook); a
 * WhatsApp reply also marks the WhatsApp message it answers read
 * (replies-as-read.ts).
 */
/** Where core reads the workers' inbound messages (replies, MO). */
export const INBOUND_READER = { topic: topicName('inbound'), group: 'core-inbound' } as const;

export function startInboundConsumer(deps: {
  bus: Bus;
  state: HotState;
  history: MessageHistory;
  optOuts: OptOutStore;
  recent: RecentMessages;
  numericIds: () => number;
  log: Logger;
  /** The application that claimed an address (a replyAddressKey), if any (accounts.ownerOfAddress). */
  ownerOfAddress?: (addressKey: string) => Promise<string | undefined>;
  dedupWindowMs?: number;
  /**
   * Replies go on to the application's reply callback. `knownAs` gives the
   * integer id of each answered message whose client knows it by one (Gateway
   * v1, campaign reports), by its UUID.
   */
  onReplies?: (records: readonly MessageRecord[], knownAs: ReadonlyMap<string, number>) => void;
  /** Automatic answers (campaign reply_response / opt_out_response), once the replies are stored. */
  respond?: (records: readonly MessageRecord[]) => Promise<void>;
}): Promise<Subscription> {
  const ownerOf = deps.ownerOfAddress ?? (async () => undefined);
  const windowMs = deps.dedupWindowMs ?? DEFAULT_DEDUP_WINDOW_MS;
  const fromHistory = createReplyContextFromHistory(deps.history);
  /** The messages replies quote (WhatsApp's context); none where the lookup fails: they are routed as any other. */
  const quotedBy = async (replies: readonly QuotingReply[]) => {
    try {
      return await quotedMessages(deps, replies);
    } catch (err) {
      deps.log.warn('could not look up the messages replies quote; they are routed by the address they were sent to', { err });
      return new Map<number, LastMessage>();
    }
  };
  /** What hot state knows of the handset and the address; where it knows nothing of the handset, with history's (contextOfReply). */
  const contextOf = async (handset: string, addressKey: string): Promise<ReplyContext> => {
    const known = await deps.state.getReplyContext(handset, addressKey);
    try {
      return await contextOfReply(known, () => fromHistory.contextOf(handset, addressKey));
    } catch (err) {
      deps.log.warn('could not look up in history what a reply answers; it is routed by hot state alone', { err, source: handset });
      return known;
    }
  };
  return deps.bus.subscribe(
    INBOUND_READER.topic,
    async (batch) => {
      const delivered = decodeRecords(batch, decodeInbound, deps.log).map(({ record: r, payload: m }) => ({
        m,
        busPosition: `${r.topic}/${r.partition}/${r.offset}`,
      }));
      // Where each reply goes, and the conversation's turn its key names (inbound-dedup.ts), before the dedup.
      // A WhatsApp reply by the business number's phone number id: what hermod's WhatsApp sends are remembered by.
      const contexts = await Promise.all(delivered.map(({ m }) => contextOf(m.source, replyAddressKey(m.businessId || m.destination))));
      const ids = await firstDeliveries(
        deps.state,
        delivered.map(({ m, busPosition }, i) => ({ key: inboundKey(m, contexts[i]!.lastFromAddress?.messageId), candidateId: uuid(), busPosition })),
        windowMs,
      );
      const quoted = await quotedBy(delivered.map(({ m }) => m));
      const routes = await Promise.all(
        delivered.map(async ({ m }, i) => {
          const claimedBy = await ownerOf(replyAddressKey(m.destination));
          // The address's claim first; else a claim on the carrier's id of it (a WhatsApp phone number id).
          const claimant = claimedBy ?? (m.businessId ? await ownerOf(replyAddressKey(m.businessId)) : undefined);
          // A WhatsApp business number no application sends from or claimed is another business's, whoever texted the handset.
          const route = routeReply(contexts[i]!, claimant, quoted.get(i), m.channel !== 'wab');
          if (!asksToOptBackIn(m.text)) return route;
          return startRoute(route, contexts[i]!, claimant, m.source, (pairs) => deps.state.areOptedOut(pairs));
        }),
      );
      for (const [i, { m }] of delivered.entries()) {
        if (ids[i] === undefined)
          deps.log.info('dropped a redelivered reply', { source: m.source, destination: m.destination, carrierRef: m.carrierRef ?? '' });
      }
      await stopsDroppedAsRedeliveries(
        deps,
        delivered.flatMap(({ m }, i) =>
          ids[i] === undefined && !m.carrierRef && routes[i]!.applicationId ? [{ m, applicationId: routes[i]!.applicationId }] : [],
        ),
      );
      const fresh = delivered.flatMap(({ m }, i) => (ids[i] === undefined ? [] : [{ m, id: ids[i]!, route: routes[i]! }]));
      if (fresh.length === 0) return;

      const records: MessageRecord[] = fresh.map(({ m, id }, i) => ({
        id,
        numericId: deps.numericIds(),
        applicationId: fresh[i]!.route.applicationId,
        channel: m.channel,
        direction: 'MO',
        destination: m.destination,
        source: m.source,
        content: m.text,
        reference: '',
        messageClass: '',
        mask: '',
        smsClass: 0,
        scheduledAt: 0,
        integrationId: '',
        via: 'carrier',
        segments: 1,
        acceptedAt: m.at,
        replyTo: fresh[i]!.route.replyTo,
        replyRoute: fresh[i]!.route.rule,
      }));
      await deps.history.insertMessages(
        records,
        records.map((r) => ({
          messageId: r.id,
          applicationId: r.applicationId,
          status: 'received',
          at: r.acceptedAt,
          detail: '',
          carrierId: '',
          errorCode: '',
        })),
      );
      deps.recent.put(records);
      // A reply is final once received: it stays in memory only the final time to live.
      deps.recent.finished(records.map((r) => r.id));
      await deps.state.advanceStatuses(records.map((r) => ({ id: r.id, status: 'received', at: r.acceptedAt })));
      const knownAs = await numericNames(deps, records);
      for (const r of records) {
        // The answered message as its client knows it (the reply callback's reply_to); an IM attempt's own id besides.
        const replyTo = clientReplyTo(r.replyTo, knownAs);
        if (r.applicationId)
          deps.log.info('reply routed', {
            id: r.id,
            application: r.applicationId,
            rule: r.replyRoute,
            source: r.source,
            destination: r.destination,
            replyTo,
            ...(replyTo !== undefined && replyTo !== r.replyTo ? { attempt: r.replyTo } : {}),
          });
        else deps.log.warn('reply matches no application', { id: r.id, rule: r.replyRoute, source: r.source, destination: r.destination });
      }
      deps.onReplies?.(records, knownAs);
      await markRepliedRead(deps, records);

      const optOuts = records
        .map((r) => ({ r, keyword: keywordOf(r.content) }))
        .filter((x) => x.keyword && x.r.applicationId)
        // History keeps them by the same handset key as hot state, so a STOP and a START written differently replace each other there too.
        .map(({ r, keyword }) => ({ applicationId: r.applicationId, handset: handsetKey(r.source), optedOut: keyword === 'stop', at: r.acceptedAt }));
      if (optOuts.length > 0) {
        await deps.optOuts.recordOptOuts(optOuts);
        await deps.state.setOptOuts(optOuts);
        for (const o of optOuts)
          deps.log.info(o.optedOut ? 'handset opted out' : 'handset opted back in', { application: o.applicationId, handset: o.handset });
      }
      await deps.respond?.(records).catch((err) => deps.log.error('could not answer replies', { err }));
    },
    { group: INBOUND_READER.group, maxBatch: 500 },
  );
}

/**
 * A STOP dropped as a redelivery still opts its handset out when it is opted
 * in: without a carrier reference, a person who said STOP, then START, then
 * STOP again inside the dedup window (and was sent nothing in between) sends
 * what a carrier's redelivery would. Stopping twice is harmless; a START
 * dropped so is not taken (it errs towards not messaging the handset).
 */
async function stopsDroppedAsRedeliveries(
  deps: { state: HotState; optOuts: OptOutStore; log: Logger },
  dropped: readonly { m: { source: string; text: string; at: number }; applicationId: string }[],
): Promise<void> {
  const stops = dropped.filter((d) => keywordOf(d.m.text) === 'stop');
  if (stops.length === 0) return;
  const already = await deps.state.areOptedOut(stops.map((d) => ({ applicationId: d.applicationId, handset: d.m.source })));
  const optOuts = stops
    .filter((_, i) => !already[i])
    .map((d) => ({ applicationId: d.applicationId, handset: handsetKey(d.m.source), optedOut: true, at: d.m.at }));
  if (optOuts.length === 0) return;
  await deps.optOuts.recordOptOuts(optOuts);
  await deps.state.setOptOuts(optOuts);
  for (const o of optOuts) deps.log.info('handset opted out by a STOP sent again', { application: o.applicationId, handset: o.handset });
}

/** Interfaces whose clients know a message by its integer id. */
const NUMBERED = new Set(['gateway_v1', 'campaign']);

/**
 * The integer ids of the messages these replies answer, where their client
 * knows them so: from memory, else one history query. A lookup that fails
 * leaves the UUID (the reply is not held back for it).
 */
async function numericNames(
  deps: { recent: RecentMessages; history: MessageHistory; log: Logger },
  replies: readonly MessageRecord[],
): Promise<Map<string, number>> {
  const known = new Map<string, number>();
  const missing: string[] = [];
  for (const id of new Set(replies.map((r) => r.replyTo).filter(Boolean))) {
    const m = deps.recent.get(id);
    if (!m) missing.push(id);
    else if (NUMBERED.has(m.via)) known.set(id, m.numericId);
  }
  if (missing.length === 0) return known;
  try {
    for (const m of await deps.history.findMessages(missing)) if (NUMBERED.has(m.via)) known.set(m.id, m.numericId);
  } catch (err) {
    deps.log.warn('could not look up the messages replies answer; their reply_to stays the UUID', { err, messages: missing.length });
  }
  return known;
}
