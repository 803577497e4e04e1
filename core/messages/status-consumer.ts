import type { Bus, Subscription } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { MessageHistory } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { StatusChange, StatusRecorder } from './status-recorder';
import { decodeRecords, decodeStatus, type StatusUpdate } from '../ports/bus-payloads';
import type { Logger } from '../../lib/log';
import { unmatchedReports } from '../../lib/metrics';
import { createUnmatchedReports } from './unmatched-reports';
import { openHeldReportsFile } from './held-reports-file';
import { processSpan } from '../ports/bus-spans';
import { carryTrace, type TraceSpan } from '../../lib/tracing';
import { canAdvance, stageOf } from '../domain/message-status';

const STATUS_TOPIC = topicName('status');
/** Where core reads the workers' status reports. */
export const STATUS_READER = { topic: STATUS_TOPIC, group: 'core-status' } as const;
const SUBMITTED_STAGE = stageOf('submitted');
/** Carrier ids a line about dropped reports names (the count says how many in all). */
const DROPPED_NAMED = 10;

const countBy = (values: readonly string[]): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
};

/**
 * Core's side of the status topic: resolves delivery reports known only by
 * carrier id, records each change, and acknowledges the batch only once its
 * events are durable (a crash means redelivery, and duplicates are ignored
 * because statuses never move backwards). A report whose carrier id is not
 * known yet waits aside (unmatched-reports.ts) rather than holding up the
 * batch: retrying the whole batch kept the submits it carried from being
 * recorded, so two partitions could each wait on the other. So does a
 * carrier's report that came before its submit's own `submitted` (a webhook
 * keyed by carrier id, a receipt taken by another worker process): applied
 * first, it would make `submitted` a step back, never told to the client.
 * It waits until `submitted` is applied, or `holdEarlyMs` has passed.
 */
export function startStatusConsumer(deps: {
  bus: Bus;
  state: HotState;
  history: MessageHistory;
  recorder: StatusRecorder;
  log: Logger;
  holdUnmatchedMs?: number;
  /** How long a report that came before its submit's own waits for it, at most (then it applies on its own). */
  holdEarlyMs?: number;
  /**
   * Where held reports are kept across a crash (a file in the data
   * directory): each was acknowledged to its carrier, which will not send it
   * again. Without it they live in memory only.
   */
  heldFile?: { path: string; fsync: boolean };
  /**
   * Messages a worker gave back to be handed over again later (`retryAt`, see
   * deferred-sends.ts): not status changes. Without it they are logged and
   * left to recovery at the next start.
   */
  deferred?: (deferrals: readonly StatusUpdate[]) => Promise<void>;
}): Promise<Subscription> {
  // A line on the dashboards from the start, not "no data" until the first.
  for (const outcome of ['held', 'early', 'matched_later', 'dropped']) unmatchedReports.inc({ outcome }, 0);
  /** The message of each update: its own id, else its carrier id's in hot state, else in history (one query for the batch). */
  const resolveIds = async (updates: readonly StatusUpdate[]): Promise<(string | undefined)[]> => {
    /** A message an earlier version submitted is known by its carrier id as written; the report goes on under that one. */
    const asWritten = (u: StatusUpdate, id: string | undefined): string | undefined => {
      if (id !== undefined) u.carrierId = u.carrierIdAsWritten;
      return id;
    };
    const ids = await Promise.all(
      updates.map(async (u) => {
        if (u.id) return u.id;
        if (!u.carrierId) return undefined;
        const id = await deps.state.getMessageIdByCarrierId(u.carrierId);
        if (id !== undefined || !u.carrierIdAsWritten) return id;
        return asWritten(u, await deps.state.getMessageIdByCarrierId(u.carrierIdAsWritten));
      }),
    );
    const missed = [
      ...new Set(
        updates.flatMap((u, i) => (ids[i] === undefined && u.carrierId ? [u.carrierId, ...(u.carrierIdAsWritten ? [u.carrierIdAsWritten] : [])] : [])),
      ),
    ];
    if (missed.length === 0) return ids;
    const found = await deps.history.findMessageIdsByCarrierIds(missed);
    const channels = new Map<string, string | undefined>();
    for (const u of updates) {
      const id = (u.carrierId && found.get(u.carrierId)) || (u.carrierIdAsWritten && found.get(u.carrierIdAsWritten));
      if (id) channels.set(id, u.channel);
    }
    await rememberFromHistory(channels);
    return ids.map((id, i) => {
      const u = updates[i]!;
      return id ?? found.get(u.carrierId ?? '') ?? (u.carrierIdAsWritten ? asWritten(u, found.get(u.carrierIdAsWritten)) : undefined);
    });
  };
  /**
   * Hot state forgot these messages (a restart of memory state, or their
   * final minute passed), and carriers send receipts again after a restart:
   * their status comes back from history first, so a receipt for a message
   * already received is refused as a step back, not told to its client twice.
   */
  /**
   * Each message's channel comes with it (history's events do not hold it): an e-mail's bounce in history overtakes
   * a `received` hot state still holds (a replica behind), as it did when it was recorded.
   */
  const rememberFromHistory = async (channels: ReadonlyMap<string, string | undefined>): Promise<void> => {
    if (channels.size === 0) return;
    const latest = await deps.history.latestStatuses([...channels.keys()]);
    if (latest.size > 0) await deps.state.advanceStatuses([...latest].map(([id, s]) => ({ id, status: s.status, at: s.at, channel: channels.get(id) })));
  };
  /**
   * Which of the reports tell of a part of a long message delivered while
   * another part of it is not yet: the handset has the message only once
   * every part arrived, and a part that failed fails it at once. Each is
   * noted in hot state (deliveredWhole) and records nothing; the part that
   * completes the message records `received`.
   */
  const partsOnly = async (updates: readonly StatusUpdate[], ids: readonly (string | undefined)[]): Promise<Set<number>> => {
    const asked = updates.flatMap((u, i) => (u.status === 'received' && u.carrierId && ids[i] ? [i] : []));
    if (asked.length === 0) return new Set();
    const whole = await deps.state.deliveredWhole(asked.map((i) => ({ messageId: ids[i]!, carrierId: updates[i]!.carrierId! })));
    return new Set(asked.filter((_, k) => !whole[k]));
  };
  const holdEarlyMs = deps.holdEarlyMs ?? 10_000;
  /** `waitForSubmit`: a carrier's report on its submit applies only once the message reached `submitted`. */
  const changeOf = (u: StatusUpdate, id: string, waitForSubmit = true): StatusChange => ({
    messageId: id,
    applicationId: '',
    channel: u.channel,
    status: u.status,
    at: u.at,
    detail: u.detail,
    carrierId: u.carrierId,
    ...(u.partCarrierIds?.length ? { partCarrierIds: u.partCarrierIds } : {}),
    ...(u.route ? { route: u.route } : {}),
    errorCode: u.errorCode,
    ...(waitForSubmit && u.carrierId && stageOf(u.status) > SUBMITTED_STAGE ? { onceSubmitted: true } : {}),
  });
  /**
   * The `received` a read proves (the handset has the message), told before it: a client whose `delivered` report
   * comes after the read (WhatsApp's webhooks keep no order, as its providers say) or never (a reply taken as read)
   * still hears it, in order. Refused as a duplicate where it was applied, as it mostly was.
   */
  const provenBy = (u: StatusUpdate, id: string, waitForSubmit = true): StatusChange | undefined =>
    u.status === 'read'
      ? { ...changeOf({ ...u, status: 'received', detail: 'received (it was read)', errorCode: '' }, id, waitForSubmit), proven: true }
      : undefined;
  /**
   * Which refused changes were refused only for coming before their submit's report, not as a step back: the
   * message is still short of `submitted`, or has reached it since (another partition's batch applied it
   * meanwhile), so the change would apply now. One look at hot state each, for refused reports only: rare.
   * Apart from those (`forgotten`): refused because hot state did not know the message at all (a Redis back
   * empty, or its final minute passed) while history has it submitted or further. Such a report came after its
   * submit's, not before: the carrier's answer to a question about a message whose receipts were lost with
   * Redis is one, and there are thousands then. The caller records them again at once.
   */
  const earlyOnes = async (changes: readonly StatusChange[], applied: readonly boolean[]): Promise<{ early: Set<number>; forgotten: Set<number> }> => {
    const early = new Set<number>();
    const forgotten = new Set<number>();
    /** Refused for a message hot state has no status for: read back from history, then looked at again. */
    const unknown: number[] = [];
    const look = (indexes: readonly number[], reread: boolean) =>
      Promise.all(
        indexes.map(async (i) => {
          const c = changes[i]!;
          const current = await deps.state.getStatus(c.messageId);
          if (!current && !reread) unknown.push(i);
          else if (current && reread && stageOf(current.status) >= SUBMITTED_STAGE) {
            if (canAdvance(current.status, c.status, c.channel)) forgotten.add(i);
          } else if (!current || canAdvance(current.status, c.status, c.channel)) early.add(i);
        }),
      );
    // A proven one is early only where the report proving it is: that one decides.
    await look(
      changes.flatMap((c, i) => (applied[i] || !c.onceSubmitted || c.proven ? [] : [i])),
      false,
    );
    if (unknown.length === 0) return { early, forgotten };
    // Another part of a long message hot state let go (a minute after its final status) while the part's carrier id
    // lived on, or a restart: history says where it stands, so a late failure or a duplicate is refused as a step back.
    await rememberFromHistory(new Map(unknown.map((i) => [changes[i]!.messageId, changes[i]!.channel])));
    await look(unknown, true);
    return { early, forgotten };
  };
  /**
   * Records the changes, and says which were refused for coming before their submit's report (the caller holds
   * their reports aside). Those refused only because hot state had forgotten their message are recorded again
   * once history has told hot state where it stands, with the refused changes of the same report (the `received`
   * a read proves), rather than held as early: they were not, and holding them counted them as unmatched.
   * `reportOf`: which report each change is of.
   */
  const recordChanges = async (changes: readonly StatusChange[], reportOf: readonly unknown[]): Promise<Set<number>> => {
    const applied = await deps.recorder.record(changes);
    const { early, forgotten } = await earlyOnes(changes, applied);
    if (forgotten.size === 0) return early;
    const reports = new Set([...forgotten].map((i) => reportOf[i]));
    const again = changes.flatMap((c, i) => (!applied[i] && c.onceSubmitted && reports.has(reportOf[i]) ? [i] : []));
    const appliedAgain = await deps.recorder.record(again.map((i) => changes[i]!));
    // Refused again (hot state lost once more meanwhile, or a race): held as early after all, as before.
    const refusedAgain = await earlyOnes(
      again.map((i) => changes[i]!),
      appliedAgain,
    );
    for (const i of again) early.delete(i);
    for (const k of [...refusedAgain.early, ...refusedAgain.forgotten]) early.add(again[k]!);
    return early;
  };

  /**
   * A carrier's report that waited out its submit's report proves `sent` and `submitted`, recorded before it
   * without waiting for anything. Hot state that does not know the message (a Redis master back empty, the
   * message's carrier id stored again after the wait) reads it back from history first: there they were most
   * likely told already, and are then refused as duplicates rather than told twice.
   */
  const rememberProven = async (batch: readonly StatusUpdate[], ids: readonly (string | undefined)[], waitedOut: (i: number) => boolean): Promise<void> => {
    const channels = new Map<string, string | undefined>();
    batch.forEach((u, i) => {
      const id = ids[i];
      if (id && u.carrierId && stageOf(u.status) > SUBMITTED_STAGE && waitedOut(i)) channels.set(id, u.channel);
    });
    if (channels.size === 0) return;
    const current = await Promise.all([...channels.keys()].map((id) => deps.state.getStatus(id)));
    [...channels.keys()].forEach((id, k) => {
      if (current[k]) channels.delete(id);
    });
    await rememberFromHistory(channels);
  };
  const unmatched = createUnmatchedReports({ holdMs: deps.holdUnmatchedMs ?? 120_000, maxHeld: 100_000 });
  const kept = deps.heldFile ? openHeldReportsFile(deps.heldFile.path, deps.heldFile.fsync) : undefined;
  // Each goes on waiting from when it was first held: a core that keeps restarting does not keep them for ever.
  for (const u of kept?.kept ?? []) unmatched.hold(u, kept?.heldSince(u));
  if (kept && kept.kept.length > 0) deps.log.info('matching delivery reports held before the restart', { reports: kept.kept.length });
  /**
   * Once nothing is held (a cheap rewrite: the next start reads nothing), or most of the file is reports
   * released, it is rewritten with those still held; a release lost to a failed append goes with it.
   */
  const compactHeld = (): void => {
    if (!kept || kept.file.lines === 0) return;
    if (unmatched.size > 0 && kept.file.lines <= Math.max(1000, 2 * unmatched.size)) return;
    try {
      kept.file.rewrite(unmatched.all(), (u) => Date.now() - unmatched.heldFor(u));
    } catch (err) {
      deps.log.warn('could not rewrite the file of held delivery reports; it grows until the next try', { err });
    }
  };
  /** Reports matched or given up leave the file too, or every start would hold them, and warn, again. */
  const releaseHeld = (released: readonly StatusUpdate[]): void => {
    try {
      kept?.file.release(released.map((u) => u.carrierId!));
    } catch (err) {
      deps.log.warn('could not mark delivery reports released in their file; the next rewrite leaves them out', { err });
    }
  };
  // Held reports are matched again when due (every half second at first), a bounded number at a time.
  let matching = false;
  /** Reports were made due while a look ran: another look follows it at once. */
  let again = false;
  const matchHeld = async (): Promise<void> => {
    if (matching) {
      again = true;
      return;
    }
    if (unmatched.size === 0 && !kept?.file.lines) return;
    matching = true;
    try {
      const { waiting: batch, expired } = unmatched.take(2000);
      if (expired.length > 0) {
        unmatchedReports.inc({ outcome: 'dropped' }, expired.length);
        // One line a sweep: after a crash thousands expire at once (a trial: 8,174 lines in 3 s, one each).
        deps.log.warn('dropping delivery reports whose carrier ids never matched a message', {
          reports: expired.length,
          carrierIds: expired.slice(0, DROPPED_NAMED).map((u) => u.carrierId),
          statuses: countBy(expired.map((u) => u.status)),
        });
      }
      releaseHeld(expired);
      const ids = await resolveIds(batch);
      batch.forEach((u, i) => {
        if (ids[i] === undefined) unmatched.notFound(u);
      });
      const partOnly = await partsOnly(batch, ids);
      // Decided once, before the reads below: a report's wait ends for both of its uses or for neither.
      const waitingFor = batch.map((u) => unmatched.heldFor(u) < holdEarlyMs);
      await rememberProven(batch, ids, (i) => !partOnly.has(i) && !waitingFor[i]);
      let matched: StatusUpdate[] = [];
      const changes: StatusChange[] = [];
      /** The matched report of each change (also of the `sent` and `submitted` it proves, and of the `received` a read proves). */
      const reportOf: number[] = [];
      batch.forEach((u, i) => {
        const id = ids[i];
        if (!id) return;
        if (partOnly.has(i)) {
          matched.push(u);
          return;
        }
        const waiting = waitingFor[i]!;
        // Waited for its submit's own report long enough: that report is lost (its worker died between the
        // submit and saying so). A carrier's report on a submit proves the submit: `submitted` first, so the
        // client is still told it, in order. Refused as a duplicate where it was applied after all.
        // Its `sent` too, where the worker died before saying that either (refused as a duplicate where it did).
        if (!waiting && u.carrierId && stageOf(u.status) > SUBMITTED_STAGE) {
          for (const status of ['sent', 'submitted'] as const) {
            changes.push({ ...changeOf({ ...u, status, detail: `${status} (the carrier reported on it)`, errorCode: '' }, id), at: u.at });
            reportOf.push(matched.length);
          }
        }
        const proven = provenBy(u, id, waiting);
        if (proven) {
          changes.push(proven);
          reportOf.push(matched.length);
        }
        changes.push(changeOf(u, id, waiting));
        reportOf.push(matched.length);
        matched.push(u);
      });
      if (changes.length > 0) {
        // Still ahead of their submit's report: held on.
        const early = await recordChanges(changes, reportOf);
        const heldOn = new Set([...early].map((i) => reportOf[i]!));
        if (heldOn.size > 0) matched = matched.filter((_, i) => !heldOn.has(i));
      }
      // Released once recorded: a failed record leaves them held, to be matched again.
      if (matched.length > 0) unmatchedReports.inc({ outcome: 'matched_later' }, matched.length);
      releaseHeld(matched.filter((u) => unmatched.release(u)));
      compactHeld();
    } catch (err) {
      deps.log.warn('matching held delivery reports failed; will retry', { err });
    } finally {
      matching = false;
      if (again) {
        again = false;
        void matchHeld();
      }
    }
  };
  const timer = setInterval(() => void matchHeld(), 500);
  timer.unref();

  return deps.bus
    .subscribe(
      STATUS_TOPIC,
      async (records) => {
        const all = decodeRecords(records, decodeStatus, deps.log).map((d) => d.payload);
        const deferrals = all.filter((u) => u.retryAt !== undefined && u.id);
        const updates = deferrals.length === 0 ? all : all.filter((u) => u.retryAt === undefined || !u.id);
        if (deferrals.length > 0) {
          if (deps.deferred) await deps.deferred(deferrals);
          else deps.log.warn('messages given back to be sent later, with nothing here to take them; the next start does', { messages: deferrals.length });
        }
        const ids = await resolveIds(updates);
        const partOnly = await partsOnly(updates, ids);
        const changes: StatusChange[] = [];
        /** The update of each change. */
        const from: StatusUpdate[] = [];
        const spans: TraceSpan[] = [];
        const holdAside = (u: StatusUpdate, outcome: 'held' | 'early'): void => {
          if (unmatched.hold(u)) {
            kept?.file.hold(u);
            unmatchedReports.inc({ outcome });
          } else {
            unmatchedReports.inc({ outcome: 'dropped' });
            deps.log.warn('dropping a delivery report without a message (too many waiting)', { carrierId: u.carrierId, status: u.status });
          }
        };
        updates.forEach((u, i) => {
          const id = ids[i];
          if (partOnly.has(i)) return;
          if (id) {
            const change = changeOf(u, id);
            // Tracing on: the change (and the callback it causes) continues the trace of the worker that reported it.
            const span = processSpan(STATUS_TOPIC, u.trace, { 'hermod.message_id': id, 'hermod.status': u.status });
            if (span) {
              spans.push(span);
              carryTrace(change, span.traceparent);
            }
            const proven = provenBy(u, id);
            if (proven) {
              if (span) carryTrace(proven, span.traceparent);
              changes.push(proven);
              from.push(u);
            }
            changes.push(change);
            from.push(u);
            return;
          }
          // A receipt for a submit whose outcome is not recorded yet: it waits aside, never in front of the others,
          // on disk before its batch is acknowledged (a failed write fails the batch, which comes again).
          holdAside(u, 'held');
        });
        try {
          // A report ahead of its submit's own waits aside too, until that one is applied.
          const early = await recordChanges(changes, from);
          // Once each: a read and the `received` it proves are held together.
          for (const u of new Set([...early].map((i) => from[i]!))) holdAside(u, 'early');
          // Reports held for the carrier ids these submits name are matched now, not at their next look (seconds away
          // for one that waited long): an IM attempt's timer runs meanwhile.
          if (unmatched.size > 0) {
            const named = changes.flatMap((c) => (c.status === 'submitted' && c.carrierId ? [c.carrierId, ...(c.partCarrierIds ?? [])] : []));
            if (unmatched.dueNow(named)) void matchHeld();
          }
        } catch (err) {
          for (const span of spans) span.end(err);
          throw err;
        }
        for (const span of spans) span.end();
      },
      { group: STATUS_READER.group, maxBatch: 2000 },
    )
    .then((subscription) => ({
      async close() {
        clearInterval(timer);
        await subscription.close();
        kept?.file.close();
      },
    }));
}
