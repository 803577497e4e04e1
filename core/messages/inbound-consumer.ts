import { randomUUID } from 'node:crypto';
import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { History, MessageRecord } from '../ports/history';
import type { HotState } from '../ports/state';
import type { RecentMessages } from './recent-messages';
import { decodeInbound } from './bus-payloads';
import type { Logger } from '../../lib/log';
import { keywordOf } from './reply-keywords';

/**
 * Core's side of the inbound topic: each reply (MO) is stored as a message of
 * direction MO for the application whose message last went to that handset,
 * with `replyTo` naming that message. STOP-style replies opt the handset out
 * of that application; START-style ones opt it back in.
 */
export function startInboundConsumer(deps: {
  bus: Bus;
  state: HotState;
  history: History;
  recent: RecentMessages;
  numericIds: () => number;
  log: Logger;
  /** Replies go on to the application's reply callback. */
  onReplies?: (records: readonly MessageRecord[]) => void;
  /** Automatic answers (campaign reply_response / opt_out_response), once the replies are stored. */
  respond?: (records: readonly MessageRecord[]) => Promise<void>;
}): Promise<Subscription> {
  return deps.bus.subscribe(
    topicName('inbound'),
    async (batch) => {
      const inbound = batch.map((r) => decodeInbound(r.value));
      const answered = await Promise.all(inbound.map((m) => deps.state.getLastMessage(m.source)));
      const records: MessageRecord[] = inbound.map((m, i) => ({
        id: randomUUID(),
        numericId: deps.numericIds(),
        applicationId: answered[i]?.applicationId ?? '',
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
        replyTo: answered[i]?.messageId ?? '',
      }));
      await deps.history.insertMessages(records, records.map((r) => ({ messageId: r.id, applicationId: r.applicationId, status: 'received', at: r.acceptedAt, detail: '', carrierId: '', errorCode: '' })));
      deps.recent.put(records);
      await deps.state.advanceStatuses(records.map((r) => ({ id: r.id, status: 'received', at: r.acceptedAt })));
      deps.onReplies?.(records);

      const optOuts = records
        .map((r) => ({ r, keyword: keywordOf(r.content) }))
        .filter((x) => x.keyword && x.r.applicationId)
        .map(({ r, keyword }) => ({ applicationId: r.applicationId, handset: r.source, optedOut: keyword === 'stop', at: r.acceptedAt }));
      if (optOuts.length > 0) {
        await deps.history.recordOptOuts(optOuts);
        await deps.state.setOptOuts(optOuts);
        for (const o of optOuts) deps.log.info(o.optedOut ? 'handset opted out' : 'handset opted back in', { application: o.applicationId, handset: o.handset });
      }
      await deps.respond?.(records).catch((err) => deps.log.error('could not answer replies', { err }));
      for (const r of records) if (!r.applicationId) deps.log.warn('reply from a handset no application has messaged', { source: r.source, id: r.id });
    },
    { group: 'core-inbound', maxBatch: 500 },
  );
}
