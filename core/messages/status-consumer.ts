import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { MessageHistory } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { StatusChange, StatusRecorder } from './status-recorder';
import { decodeRecords, decodeStatus, type StatusUpdate } from '../ports/bus-payloads';
import type { Logger } from '../../lib/log';
import { unmatchedReports } from '../../lib/metrics';
import { createUnmatchedReports } from './unmatched-reports';
import { processSpan } from '../ports/bus-spans';
import { carryTrace, type TraceSpan } from '../../lib/tracing';

const STATUS_TOPIC = topicName('status');

/**
 * Core's side of the status topic: resolves delivery reports known only by
 * carrier id, records each change, and acknowledges the batch only once its
 * events are durable (a crash means redelivery, and duplicates are ignored
 * because statuses never move backwards). A report whose carrier id is not
 * known yet waits aside (unmatched-reports.ts) rather than holding up the
 * batch: retrying the whole batch kept the submits it carried from being
 * recorded, so two partitions could each wait on the other.
 */
export function startStatusConsumer(deps: {
  bus: Bus;
  state: HotState;
  history: MessageHistory;
  recorder: StatusRecorder;
  log: Logger;
  holdUnmatchedMs?: number;
}): Promise<Subscription> {
  /** The message of each update: its own id, else its carrier id's in hot state, else in history (one query for the batch). */
  const resolveIds = async (updates: readonly StatusUpdate[]): Promise<(string | undefined)[]> => {
    const ids = await Promise.all(updates.map((u) => u.id || (u.carrierId ? deps.state.getMessageIdByCarrierId(u.carrierId) : undefined)));
    const missed = [...new Set(updates.flatMap((u, i) => (ids[i] === undefined && u.carrierId ? [u.carrierId] : [])))];
    if (missed.length === 0) return ids;
    const found = await deps.history.findMessageIdsByCarrierIds(missed);
    return ids.map((id, i) => id ?? found.get(updates[i]!.carrierId ?? ''));
  };
  const changeOf = (u: StatusUpdate, id: string): StatusChange => ({
    messageId: id,
    applicationId: '',
    channel: u.channel,
    status: u.status,
    at: u.at,
    detail: u.detail,
    carrierId: u.carrierId,
    errorCode: u.errorCode,
  });

  const unmatched = createUnmatchedReports({ holdMs: deps.holdUnmatchedMs ?? 120_000, maxHeld: 100_000 });
  // Held reports are matched again every half second, a bounded number at a time.
  let matching = false;
  const matchHeld = async (): Promise<void> => {
    if (matching || unmatched.size === 0) return;
    matching = true;
    try {
      const { waiting, expired } = unmatched.take();
      for (const u of expired) {
        unmatchedReports.inc({ outcome: 'dropped' });
        deps.log.warn('dropping a delivery report whose carrier id never matched a message', { carrierId: u.carrierId, status: u.status });
      }
      const batch = waiting.slice(0, 2000);
      const ids = await resolveIds(batch);
      const changes: StatusChange[] = [];
      batch.forEach((u, i) => {
        const id = ids[i];
        if (!id) return;
        unmatched.release(u.carrierId!);
        unmatchedReports.inc({ outcome: 'matched_later' });
        changes.push(changeOf(u, id));
      });
      if (changes.length > 0) await deps.recorder.record(changes);
    } catch (err) {
      deps.log.warn('matching held delivery reports failed; will retry', { err });
    } finally {
      matching = false;
    }
  };
  const timer = setInterval(() => void matchHeld(), 500);
  timer.unref();

  return deps.bus
    .subscribe(
      STATUS_TOPIC,
      async (records) => {
        const updates = decodeRecords(records, decodeStatus, deps.log).map((d) => d.payload);
        const ids = await resolveIds(updates);
        const changes: StatusChange[] = [];
        const spans: TraceSpan[] = [];
        updates.forEach((u, i) => {
          const id = ids[i];
          if (id) {
            const change = changeOf(u, id);
            // Tracing on: the change (and the callback it causes) continues the trace of the worker that reported it.
            const span = processSpan(STATUS_TOPIC, u.trace, { 'hermod.message_id': id, 'hermod.status': u.status });
            if (span) {
              spans.push(span);
              carryTrace(change, span.traceparent);
            }
            changes.push(change);
            return;
          }
          // A receipt for a submit whose outcome is not recorded yet: it waits aside, never in front of the others.
          if (unmatched.hold(u)) unmatchedReports.inc({ outcome: 'held' });
          else {
            unmatchedReports.inc({ outcome: 'dropped' });
            deps.log.warn('dropping a delivery report without a message (too many waiting)', { carrierId: u.carrierId, status: u.status });
          }
        });
        try {
          await deps.recorder.record(changes);
        } catch (err) {
          for (const span of spans) span.end(err);
          throw err;
        }
        for (const span of spans) span.end();
      },
      { group: 'core-status', maxBatch: 2000 },
    )
    .then((subscription) => ({
      async close() {
        clearInterval(timer);
        await subscription.close();
      },
    }));
}
