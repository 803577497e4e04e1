import { hashedUuid, uuid } from '../../lib/uuid';
import { VIA_OPT_OUT_CONFIRMATION } from '../domain/quota-exempt-via';
import type { Bus } from '../ports/bus';
import { topicName } from '../ports/bus';
import type { MessageHistory, MessageRecord, StatusEvent } from '../ports/message-history';
import type { HotState } from '../ports/state';
import type { StatusChange, StatusRecorder } from './status-recorder';
import type { RecentMessages } from './recent-messages';
import { createVoidBatcher } from '../../lib/void-batcher';
import { HermodError, toHermodError } from '../../lib/errors';
import { messagesByStatus, trackEntries } from '../../lib/metrics';
import { encodeJob } from '../ports/bus-payloads';
import { countSegments } from './segments';
import { createScheduler } from './scheduler';
import type { LinkShortener } from './link-shortener';
import { replyAddressKey } from './reply-address';
import type { Quota } from '../accounts/accounts';
import { createSendScreen } from './send-screen';
import { tooLargeRejection } from './too-large-rejection';
import { createKeyedSends, storedKeyedMessages, KEYED_HISTORY_CHECK_MS } from './keyed-sends';
import { claimedByAnother, type OwnerOfAddress } from './claimed-addresses';
import { publishSpans } from '../ports/bus-spans';
import { carryTrace, traceOf } from '../../lib/tracing';
import { createLogger, type Logger } from '../../lib/log';
import { retryUntilDone } from '../../lib/retry-until-done';

/** Runs `work`, and should it fail for now, again until it goes through (see settleStored). */
type UntilDone = (what: string, work: () => Promise<unknown>) => Promise<unknown>;

/**
 * What a caller supplies; intake adds the id, direction, segment count and acceptance time. With `dedupKey`
 * (a send with an Idempotency-Key, see messages.proto) the id derives from it, and a message already stored
 * under that id is answered instead of stored again.
 */
export type NewMessage = Omit<MessageRecord, 'id' | 'numericId' | 'direction' | 'segments' | 'acceptedAt' | 'replyTo'> & {
  dedupKey?: string;
  /** The message this one answers for (a campaign's answer to a reply: the campaign's message); none for a client's send. */
  replyTo?: string;
};

/** `via` of an opt-out confirmation: the one message an opted-out handset still gets. */
export const OPT_OUT_CONFIRMATION = VIA_OPT_OUT_CONFIRMATION;

type IntakeResult = { ok: true; id: string; numericId: number; replayed?: boolean } | { ok: false; error: HermodError };

export interface MessageIntake {
  /** Stores each message durably, then hands it to its channel. One result per message, in order. */
  accept(messages: readonly NewMessage[]): Promise<IntakeResult[]>;
  /**
   * Stores messages whose ids the caller derived (Intelligent Messaging,
   * campaign fan-out) and hands them to their channel; resolves once they are
   * stored, as `accept` does, the hand-off following in the background; or,
   * with `untilHandedOver`, once they are on the channel's topic (a campaign's
   * fan-out waits out the bus that way), or once intake drains. `keyed`: their
   * ids derive from an Idempotency-Key, and those already stored are answered, not stored again.
   */
  acceptRecords(records: MessageRecord[], options?: { untilHandedOver?: boolean; keyed?: boolean }): Promise<IntakeResult[]>;
  /**
   * Hands stored messages to their channel, or to the scheduler when their time has not come (recovery after
   * a restart, a campaign's resend), as accepted ones are handed over; resolves once each was tried. One the
   * bus refuses is tried again in the background; a single message too large for it ends `rejected`.
   */
  dispatch(records: readonly MessageRecord[]): Promise<void>;
  /**
   * Hands over messages an operator held back (a paused campaign's parked messages, at its resume), screened again
   * first, as a scheduled message is at its time: a handset that replied STOP, or a number blocked, while they waited
   * ends `blocked` without reaching a carrier. Not the quota: each took its share when it was accepted. A screen that
   * fails is tried again; resolves once the rest were handed over as dispatch hands them.
   */
  dispatchHeld(records: readonly MessageRecord[]): Promise<void>;
  /**
   * Messages their carrier refused for now (deferred-sends.ts), each to be
   * handed over again at its `scheduledAt` through the scheduler: screened
   * again at that time (a STOP meanwhile blocks it), even when that time has
   * passed already.
   */
  retryLater(records: readonly MessageRecord[]): void;
  /** Messages given to retryLater whose time has not come: campaign fan-out counts them with the SMS backlog. */
  readonly deferred: number;
  /**
   * Hot state lost its data (a Redis back without it): the answers of recent
   * Idempotency-Keys went with it, so keyed sends look in history again, as
   * after a start, for the keyed messages of the last minutes; and quota
   * counters may have gone too, so each starts again from history's count.
   */
  hotStateLost(): void;
  drain(): Promise<void>;
}

export function createMessageIntake(deps: {
  history: MessageHistory;
  state: HotState;
  bus: Bus;
  recorder: StatusRecorder;
  recent: RecentMessages;
  /** Hands out integer message ids (see numeric-ids.ts). */
  numericIds: () => number;
  /** Shortens links in messages accepted by SMS Gateway v2. */
  shortener?: LinkShortener;
  /**
   * Told of each failed hand-off; it is tried again until it succeeds, unless `givenUp`: then it was `rejected`
   * (one message too large for the bus) or, if that could not be recorded or intake drains, left to recovery at the next start.
   */
  onDispatchError?: (
    err: unknown,
    at: { unsent: number; waiting: number; failingForMs: number; givenUp: boolean; rejected: boolean; messageId?: string; applicationId?: string },
  ) => void;
  /** First wait before a failed hand-off is tried again; doubles per failure in a row up to 5 s (default 100 ms). */
  dispatchRetryMs?: number;
  /** Messages waiting for a refused hand-off beyond which new sends are refused as unavailable (default 100,000). */
  maxHandOffWaiting?: number;
  /** Where a failure that is tried again is told (a scheduled message's screen at its time). */
  log?: Logger;
  /** The application's message quota, if it has one (read for every batch: cache it). */
  quotaOf?: (applicationId: string) => Promise<Quota | undefined>;
  /** Where messages scheduled beyond the scheduler's memory window wait (emptied at start; recovery adds them back). */
  scheduledDir?: string;
  /** Scheduled messages due within this long are held in memory (default 10 min). */
  schedulerMemoryWindowMs?: number;
  /** How long after it starts intake asks history whether a keyed message is stored (see storedKeyedMessages). */
  keyedHistoryCheckMs?: number;
  /** Who claimed an address: a send from another application's (its `source` or `mask`) is refused. */
  ownerOfAddress?: OwnerOfAddress;
}): MessageIntake {
  const screen = createSendScreen({
    state: deps.state,
    quotaOf: deps.quotaOf ?? (async () => undefined),
    // The one message an opted-out handset still gets is no application's send: it takes no quota.
    exempt: (r) => r.via === OPT_OUT_CONFIRMATION,
    // A period's counter starts from what history has of it (a quota set mid-period, a restart of in-process state).
    usedSince: (applicationId, since) => deps.history.countQuotaUse(applicationId, since),
    log: deps.log,
  });
  const nextNumericId = deps.numericIds;
  const storedKeyed = storedKeyedMessages({
    history: deps.history,
    state: deps.state,
    recent: deps.recent,
    historyForMs: deps.keyedHistoryCheckMs ?? KEYED_HISTORY_CHECK_MS,
    log: deps.log,
  });
  const keyedSends = createKeyedSends(storedKeyed);
  // Group commit across all gateways: whatever arrives while one insert runs
  // goes into the next one.
  const durable = createVoidBatcher<{ record: MessageRecord; event: StatusEvent }>(
    async (items) => {
      await deps.history.insertMessages(
        items.map((i) => i.record),
        items.map((i) => i.event),
      );
    },
    { maxItems: 10_000, maxDelayMs: 0, maxConcurrent: 2 },
  );
  // Hand-offs to the channels run one at a time, each taking what was
  // accepted while the previous one ran (up to a cap): under load a hand-off
  // carries many batches, instead of batches queueing behind each other.
  // A hand-off the bus refused (a Kafka leader being elected, Redis away) is
  // tried again, ahead of what arrived since, until it goes through: the
  // messages are stored, and waiting for the next start to hand them over
  // would leave them unsent for as long as core runs. A batch the bus calls
  // too large is split; a single message it refuses so is left to recovery.
  // Once intake drains, what is still waiting is left to recovery too.
  const log = deps.log ?? createLogger({ component: 'message-intake' });
  let waiting: MessageRecord[] = [];
  let running: Promise<void> | undefined;
  let draining = false;
  let wake: (() => void) | undefined;
  let cap = MAX_HANDOFF;
  const retryMs = deps.dispatchRetryMs ?? 100;
  const maxWaiting = deps.maxHandOffWaiting ?? 100_000;
  /** Ends a message its bus refuses as too large; whether that was recorded (if not, recovery tries it again at the next start). */
  const rejectTooLarge = async (r: MessageRecord, failure: unknown): Promise<boolean> => {
    try {
      await deps.recorder.record([tooLargeRejection(r, failure)]);
      return true;
    } catch {
      return false;
    }
  };
  /** Callers of acceptRecords waiting for their records' first attempt, or for their hand-over. */
  const waiters = new Map<MessageRecord, { left: Set<MessageRecord>; untilHandedOver: boolean; resolve: () => void }>();
  const attempted = (records: readonly MessageRecord[], unsent: ReadonlySet<MessageRecord>): void => {
    for (const r of records) {
      const w = waiters.get(r);
      if (!w || (unsent.has(r) && w.untilHandedOver && !draining)) continue;
      waiters.delete(r);
      w.left.delete(r);
      if (w.left.size === 0) w.resolve();
    }
  };
  const handOff = (records: readonly MessageRecord[]): void => {
    for (const r of records) waiting.push(r);
    running ??= (async () => {
      let failingSince = 0;
      let failures = 0;
      while (waiting.length > 0) {
        if (draining && failures > 0) {
          // Stopping while the bus refuses: no last attempt to wait out; recovery hands these over at the next start.
          attempted(waiting, new Set());
          waiting = [];
          break;
        }
        const batch = waiting.length <= cap ? waiting : waiting.slice(0, cap);
        waiting = batch === waiting ? [] : waiting.slice(cap);
        let unsent: readonly MessageRecord[] = [];
        let failure: unknown;
        try {
          await dispatch(batch);
        } catch (err) {
          unsent = err instanceof UnsentRecords ? err.records : batch;
          failure = err instanceof UnsentRecords ? err.cause : err;
        }
        if (failure === undefined) {
          failingSince = 0;
          failures = 0;
          cap = MAX_HANDOFF;
          attempted(batch, new Set());
          continue;
        }
        failingSince ||= Date.now();
        const tooLarge = toHermodError(failure).code === 'body_too_large';
        // One message the bus refuses alone as too large never goes through: it ends `rejected` with the bus's
        // reason (its client is told), not left `queued` for recovery to try again at every start.
        const rejected = tooLarge && unsent.length === 1 && !draining && (await rejectTooLarge(unsent[0]!, failure));
        const givenUp = draining || (tooLarge && unsent.length === 1);
        deps.onDispatchError?.(failure, {
          unsent: unsent.length,
          waiting: unsent.length + waiting.length,
          failingForMs: Date.now() - failingSince,
          givenUp,
          rejected,
          ...(rejected ? { messageId: unsent[0]!.id, applicationId: unsent[0]!.applicationId } : {}),
        });
        if (tooLarge && unsent.length > 1) cap = Math.max(1, Math.floor(unsent.length / 2));
        if (!givenUp) waiting = unsent.concat(waiting);
        attempted(batch, givenUp ? new Set() : new Set(unsent));
        if (draining) {
          attempted(waiting, new Set());
          waiting = [];
          break;
        }
        if (tooLarge) continue;
        failures += 1;
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, Math.min(MAX_RETRY_MS, retryMs * 2 ** Math.min(failures - 1, 10)));
        });
        wake = undefined;
      }
      running = undefined;
    })();
  };
  /** Resolves once every one of `records` was tried (or, `untilHandedOver`, is on its topic), or intake drains. */
  const handedOff = (records: readonly MessageRecord[], untilHandedOver: boolean): Promise<void> =>
    // None: nothing would ever resolve it (a waiter is resolved as its records are tried).
    records.length === 0
      ? Promise.resolve()
      : new Promise((resolve) => {
          const left = new Set(records);
          const w = { left, untilHandedOver, resolve };
          for (const r of records) waiters.set(r, w);
          handOff(records);
        });
  const dispatched = async (): Promise<void> => {
    while (running) await running;
  };
  /** Screens messages again (opt-outs and block lists, not the quota): those it stops end with its verdict; the rest are returned. */
  const screenedAgain = async (records: readonly MessageRecord[]): Promise<MessageRecord[]> => {
    const verdicts = await screen.screen(records, { quota: false });
    const now = Date.now();
    const ended = records.flatMap((r, i) => {
      const v = verdicts[i]!;
      return v.send ? [] : [{ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: v.status, at: now, detail: v.detail }];
    });
    if (ended.length > 0) await deps.recorder.record(ended);
    return records.filter((_, i) => verdicts[i]!.send);
  };
  /** See MessageIntake.dispatchHeld; a scheduled message at its time goes the same way (later). */
  const dispatchHeld = async (records: readonly MessageRecord[]): Promise<void> => {
    // Tried again whatever failed: nothing unscreened goes out, and a stop meanwhile leaves them queued, to recovery,
    // which screens them again.
    for (let attempt = 1; ; attempt++) {
      try {
        const go = await screenedAgain(records);
        if (go.length > 0) await handedOff(go, false);
        return;
      } catch (err) {
        if (draining) throw err;
        if (attempt === 1 || attempt % 20 === 0)
          log.warn('could not screen messages again before they go; trying again', { err, messages: records.length, attempts: attempt });
        await new Promise((r) => setTimeout(r, 1000).unref());
      }
    }
  };
  /** Ids given to retryLater, until their time. */
  const deferredIds = new Set<string>();
  /**
   * A scheduled message at its time is screened again: its handset may have replied STOP, or an operator
   * blocked it, since it was accepted. Those end `blocked` without reaching a carrier; the rest are handed off.
   * Not the quota: it took its share when it was accepted. A screen that fails is tried again a second later
   * (nothing unscreened goes out); a stop meanwhile leaves them to recovery.
   */
  const later = (records: readonly MessageRecord[]): void => {
    for (const r of records) deferredIds.delete(r.id);
    // It fails only once intake drains: recovery hands them over at the next start.
    void dispatchHeld(records).catch(() => undefined);
  };
  const scheduler = createScheduler(later, { spillDir: deps.scheduledDir, horizonMs: deps.schedulerMemoryWindowMs });
  const untrackScheduler = trackEntries({ scheduled_messages: () => scheduler.size, handoff_waiting: () => waiting.length });

  const dispatch = async (all: readonly MessageRecord[]): Promise<void> => {
    // Intelligent Messaging attempts are handed over by the IM orchestrator, which knows their media and templates.
    const records = all.filter((r) => r.via !== 'im_attempt');
    const now = Date.now();
    const due = records.filter((r) => r.scheduledAt <= now);
    const notYet = records.filter((r) => r.scheduledAt > now);
    if (notYet.length > 0) {
      scheduler.add(notYet);
      // The scheduler holds them now and hands them over at their time.
      const queued = notYet.map((r): StatusChange => ({ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: 'queued', at: now }));
      await deps.recorder.record(queued).catch(() => recordQueuedAgain(queued));
    }
    if (due.length > 0) await publish(due);
  };

  const rememberRecipients = (records: readonly MessageRecord[]): Promise<void> =>
    deps.state.rememberLastMessages(
      records.map((r) => ({ handset: r.destination, messageId: r.id, applicationId: r.applicationId, source: replyAddressKey(r.source || r.mask) })),
    );

  /**
   * `queued` records that failed (hot state did not answer), tried again until it does: a `queued` Redis applied
   * whose answer was lost (a command timeout in a stall) is then refused and given back from history by the
   * recorder, and where the message's next status comes first, whoever applies it tells `queued` before it (hot
   * state says it was skipped).
   */
  const recordQueuedAgain = (changes: readonly StatusChange[]): void =>
    void retryUntilDone(() => deps.recorder.record(changes), {
      what: 'record the queued status of messages',
      log,
      fields: { messages: changes.length },
      giveUp: () => draining,
    }).catch(() => undefined);

  /** Records whose `queued` was recorded (at their first hand-off attempt). */
  const queuedOnce = new WeakSet<MessageRecord>();

  /**
   * Publishes each channel's records; throws UnsentRecords with those of the
   * channels whose publish failed. `queued` (taken into its channel's queue)
   * is recorded as the first publish starts, not after it: a bus such as
   * Kafka answers a publish after a worker may already have sent the message
   * and reported `sent`, and a `queued` recorded then would be refused as a
   * step back, its callback lost. A publish that fails is tried again, and
   * recovery hands over what is still `queued` at a restart.
   */
  const publish = async (records: readonly MessageRecord[]): Promise<void> => {
    try {
      await rememberRecipients(records);
    } catch (err) {
      throw new UnsentRecords(records, err);
    }
    let failed: { err: unknown } | undefined;
    const first = records.filter((r) => !queuedOnce.has(r));
    const now = Date.now();
    let notQueued = false;
    // Hot state takes the step as record() starts, before the publish below is sent.
    const queued =
      first.length === 0
        ? Promise.resolve()
        : deps.recorder.record(first.map((r) => ({ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: 'queued', at: now }))).then(
            // Marked once recorded: a `queued` that failed is tried again with the hand-off.
            () => {
              for (const r of first) queuedOnce.add(r);
            },
            () => void (notQueued = true),
          );
    const byChannel = new Map<string, MessageRecord[]>();
    for (const r of records) {
      const list = byChannel.get(r.channel) ?? [];
      list.push(r);
      byChannel.set(r.channel, list);
    }
    const unsent: MessageRecord[] = [];
    for (const [channel, list] of byChannel) {
      try {
        await publishTo(channel, list);
      } catch (err) {
        failed ??= { err };
        for (const r of list) unsent.push(r);
      }
    }
    await queued;
    if (notQueued) {
      // Those on their topic are not sent again for it: their `queued` is tried again. The others' is recorded with
      // their next hand-off.
      const notSent = new Set(unsent);
      const published = first.filter((r) => !notSent.has(r));
      for (const r of published) queuedOnce.add(r);
      if (published.length > 0)
        recordQueuedAgain(published.map((r) => ({ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: 'queued', at: now })));
    }
    if (failed) throw new UnsentRecords(unsent, failed.err);
  };

  const publishTo = async (channel: string, list: readonly MessageRecord[]): Promise<void> => {
    const topic = topicName(channel);
    const spans = publishSpans(topic, list);
    await deps.bus
      .publish(
        topic,
        list.map((r, i) => ({
          key: r.destination,
          value: encodeJob({
            id: r.id,
            applicationId: r.applicationId,
            channel: r.channel,
            destination: r.destination,
            source: r.source || r.mask,
            content: r.content,
            acceptedAt: r.acceptedAt,
            trace: spans.traces[i],
            deferredSince: r.deferredSince,
            ...(r.smsClass ? { smsClass: r.smsClass } : {}),
          }),
        })),
      )
      .then(
        () => spans.end(),
        (err: unknown) => {
          spans.end(err);
          throw err;
        },
      );
  };

  /** Stored messages whose statuses hot state has not taken yet (it failed under them): tried again in the background. */
  let settling = 0;
  /**
   * Runs what must follow storing messages: in the common case at once, while
   * the answer waits. Should hot state fail under it (a Redis master failing
   * over, a connection lost), the messages are stored all the same and will be
   * sent: the answer says they were accepted, and the rest is tried again in
   * the background (two seconds apart at most) until it goes through, or core
   * stops, leaving them to recovery at the next start.
   */
  const settleStored = async (
    count: number,
    steps: (untilDone: UntilDone) => Promise<void>,
    /** Wait for it all the same (a campaign page, held until the bus takes it). */
    wait: boolean,
  ): Promise<void> => {
    let slowed!: () => void;
    const slow = new Promise<'slow'>((resolve) => (slowed = () => resolve('slow')));
    const untilDone: UntilDone = (what, work) =>
      work().catch((err: unknown) => {
        if (!toHermodError(err).retryable) throw err;
        slowed();
        return retryUntilDone(work, { what, log, fields: { messages: count }, giveUp: () => draining });
      });
    const done = steps(untilDone);
    if (wait) return done;
    // A failure that will not pass, at the first try, fails the answer as it did before.
    if ((await Promise.race([done.then(() => 'done' as const), slow])) === 'done') return;
    settling += count;
    void done
      .catch((err: unknown) => {
        if (!draining) log.error('could not record stored messages; they are handed over at the next start', { err, messages: count });
      })
      .finally(() => (settling -= count));
  };

  /**
   * Stores the records durably with their `accepted` events, then (after the
   * answer) hands them to their channel. Opted-out and operator-blocked
   * destinations end as blocked, sends over the application's quota as
   * deficient, without reaching a carrier; Gateway v1, which has no status to
   * show that in, refuses a send over quota instead (nothing is stored).
   * Campaign messages stay out of the recent-message cache: a million of them
   * would push out what API clients are polling for.
   */
  const store = async (
    all: MessageRecord[],
    now: number,
    handOver: (records: readonly MessageRecord[]) => unknown = handOff,
    untilHandedOver = false,
  ): Promise<IntakeResult[]> => {
    // The bus has refused hand-offs for a while: nothing more is taken in (a 503 the client retries), so memory stays bounded.
    if (waiting.length + settling >= maxWaiting) {
      const error = new HermodError(
        'unavailable',
        `${waiting.length + settling} accepted messages are waiting for the message bus or hot state; try again later`,
        {
          retryable: true,
        },
      );
      return all.map(() => ({ ok: false as const, error }));
    }
    const remember = (list: MessageRecord[]): void => deps.recent.put(list.filter((r) => r.via !== 'campaign'));
    const screened = await screen.screen(all);
    const refusedNow = (i: number): boolean => {
      const v = screened[i]!;
      return !v.send && v.status === 'deficient' && all[i]!.via === 'gateway_v1';
    };
    const records = all.filter((_, i) => !refusedNow(i));
    const verdicts = screened.filter((_, i) => !refusedNow(i));
    const settled = await Promise.allSettled(
      records.map((record) =>
        durable.add({
          record,
          event: { messageId: record.id, applicationId: record.applicationId, status: 'accepted', at: now, detail: '', carrierId: '', errorCode: '' },
        }),
      ),
    );
    const stored = records.filter((_, i) => settled[i]!.status === 'fulfilled' && verdicts[i]!.send);
    const ended = records.flatMap((r, i) => {
      const v = verdicts[i]!;
      return settled[i]!.status === 'fulfilled' && !v.send ? [{ r, status: v.status, detail: v.detail }] : [];
    });
    // From here the messages are stored (the journal has them): what follows must happen, and not make the answer a failure.
    const list = ended.map((e) => e.r);
    remember(list);
    remember(stored);
    const afterStoring = async (untilDone: UntilDone): Promise<void> => {
      if (list.length > 0) {
        await untilDone('record the accepted status of messages that end at once', () =>
          deps.state.advanceStatuses(list.map((r) => ({ id: r.id, status: 'accepted', at: now }))),
        );
        deps.recorder.announce(list.map((r) => ({ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: 'accepted', at: now })));
        await untilDone('record the statuses of messages that end at once', () =>
          deps.recorder.record(
            ended.map(({ r, status, detail }) => ({ messageId: r.id, applicationId: r.applicationId, channel: r.channel, status, at: now, detail })),
          ),
        );
      }
      if (stored.length > 0) {
        await untilDone('record the accepted status of stored messages', () =>
          deps.state.advanceStatuses(stored.map((r) => ({ id: r.id, status: 'accepted', at: now }))),
        );
        for (const r of stored) messagesByStatus.inc({ channel: r.channel, status: 'accepted' });
        deps.recorder.announce(
          stored.map((r) => {
            const change: StatusChange = { messageId: r.id, applicationId: r.applicationId, channel: r.channel, status: 'accepted', at: now };
            carryTrace(change, traceOf(r));
            return change;
          }),
        );
        // Hand-off to the channel happens after the answer, and is tried again until the bus takes it.
        handOver(stored);
      }
    };
    await settleStored(list.length + stored.length, afterStoring, untilHandedOver);
    const results = new Map<MessageRecord, IntakeResult>();
    records.forEach((record, i) => {
      const s = settled[i]!;
      results.set(record, s.status === 'fulfilled' ? { ok: true, id: record.id, numericId: record.numericId } : { ok: false, error: toHermodError(s.reason) });
    });
    return all.map(
      (record, i) =>
        results.get(record) ?? {
          ok: false as const,
          error: new HermodError('quota_exceeded', (screened[i] as { detail: string }).detail),
        },
    );
  };

  return {
    async accept(messages) {
      const now = Date.now();
      const records: MessageRecord[] = messages.map((m) => ({
        id: m.dedupKey ? hashedUuid(m.applicationId, m.dedupKey) : uuid(),
        numericId: nextNumericId(),
        applicationId: m.applicationId,
        channel: m.channel,
        direction: 'MT',
        destination: m.destination,
        source: m.source,
        content: m.content,
        reference: m.reference,
        messageClass: m.messageClass,
        mask: m.mask,
        smsClass: m.smsClass,
        scheduledAt: m.scheduledAt,
        integrationId: m.integrationId,
        via: m.via,
        segments: m.channel === 'sms' ? countSegments(m.content) : 1,
        acceptedAt: now,
        replyTo: m.replyTo ?? '',
      }));
      for (const [i, m] of messages.entries()) carryTrace(records[i]!, traceOf(m));
      // Sent from another application's claimed address: refused, nothing stored.
      const ownerOf = deps.ownerOfAddress;
      const refusals = ownerOf
        ? await Promise.all(
            messages.map((m) =>
              claimedByAnother(ownerOf, m.applicationId, [
                { field: 'source', address: m.source },
                { field: 'mask', address: m.mask },
              ]),
            ),
          )
        : [];
      const allowed = records.filter((_, i) => refusals[i] === undefined);
      const keyed = messages.filter((_, i) => refusals[i] === undefined).map((m) => !!m.dedupKey);
      const results = await keyedSends.accept(allowed, keyed, async (fresh) => {
        if (deps.shortener) {
          const v2 = fresh.filter((r) => r.via === 'sms_v2');
          await deps.shortener.shorten(v2);
          for (const r of v2) r.segments = countSegments(r.content);
        }
        return store(fresh, now);
      });
      let next = 0;
      return refusals.length === 0
        ? results
        : messages.map((_, i) => {
            const refusal = refusals[i];
            return refusal === undefined ? results[next++]! : { ok: false as const, error: new HermodError('invalid_attrib', refusal) };
          });
    },
    async acceptRecords(records, options = {}) {
      let handed: Promise<void> = Promise.resolve();
      const untilHandedOver = options.untilHandedOver ?? false;
      const storeAll = (fresh: MessageRecord[]) =>
        store(fresh, Date.now(), untilHandedOver ? (stored) => (handed = handedOff(stored, true)) : handOff, untilHandedOver);
      const results = options.keyed
        ? await keyedSends.accept(
            records,
            records.map(() => true),
            storeAll,
          )
        : await storeAll(records);
      // Not even the hand-off's first try is waited for unless asked: on a hung broker it lasts as long as the bus
      // client retries, and an Intelligent Messaging client was answered 500 after 15 s for a message then sent.
      await handed;
      return results;
    },
    // Through the hand-off, as accepted messages go: a refusal is tried again in the background and a
    // single message too large for the bus ends rejected, rather than failing a start's recovery.
    dispatch: (records) => handedOff(records, false),
    dispatchHeld,
    retryLater(records) {
      if (draining) return; // recovery hands them over at the next start
      for (const r of records) deferredIds.add(r.id);
      scheduler.add(records);
    },
    get deferred() {
      return deferredIds.size;
    },
    hotStateLost: () => {
      storedKeyed.reopen();
      screen.hotStateLost();
    },
    async drain() {
      draining = true;
      wake?.();
      scheduler.stop();
      untrackScheduler();
      await durable.drain();
      await dispatched();
    },
  };
}

const MAX_RETRY_MS = 5000;
/** Most messages in one hand-off: one publish per channel and partition stays well under Kafka's 1 MB request. */
const MAX_HANDOFF = 10_000;

/** A hand-off that left `records` unsent (the rest went out); `cause` is the first failure. */
class UnsentRecords extends Error {
  constructor(
    readonly records: readonly MessageRecord[],
    override readonly cause: unknown,
  ) {
    super(`${records.length} messages were not handed to their channel`);
  }
}
