import { handsetKey } from '../domain/handset-key';
import { openIdempotencyFile, type KeptAnswer } from './idempotency-file';
import { createMemoryCarrierSnapshots } from './memory-carrier-snapshots';
import { canAdvance, isFinal, passesThroughQueue, stageOf } from '../domain/message-status';

const SUBMITTED_STAGE = stageOf('submitted');
import type { AdvanceOutcome, IdempotencyRecord, HotState, LastMessage, RateGrant, ReplyContext, StatusAdvance, StatusEntry } from '../ports/state';
import { ADVANCE_AFTER_QUEUED, ADVANCE_APPLIED, ADVANCE_REFUSED, ADVANCE_SKIPPED_QUEUED } from '../ports/state';
import { HermodError } from '../../lib/errors';
import { createMemoryScreening } from './memory-screening-state';
import { trackEntries } from '../../lib/metrics';
import { createMemoryCampaignControl } from './memory-campaign-control';
import { BoundedMap } from './bounded-map';
import { FifoMap } from '../../lib/fifo-map';
import { hasHashedMark } from '../../lib/uuid';
import { CANCELLED, EMPTY_ENTRY, hasMark, type Mark, statusOf, SUBMITTED, withMark, withStatus } from './message-entry';

export interface MemoryStateOptions {
  /** How long an entry lives after its last write (default 24 h). */
  ttlMs?: number;
  /**
   * Most entries kept per map of messages in flight (messages, carrier ids;
   * default 1,000,000 each). Past it the least recently written entries are
   * dropped first.
   */
  maxEntries?: number;
  /**
   * How long a message stays once its status is final (default 1 minute,
   * HERMOD_STATE_FINAL_TTL): late duplicate reports are refused meanwhile,
   * then reads come from history.
   */
  finalTtlMs?: number;
  /** Most messages kept with a final status (default 200,000): the oldest go first. */
  maxFinalEntries?: number;
  /**
   * How long the final status of a message sent with an Idempotency-Key (its
   * id carries hashedUuid's mark) stays besides (default a day,
   * HERMOD_IDEMPOTENCY_TTL), at most `maxFinalEntries` of them: a retry whose
   * first try's answer was lost finds it here (keyed-sends.ts).
   */
  keyedFinalTtlMs?: number;
  /**
   * Most handsets (and address + handset pairs, and addresses) remembered for
   * reply routing (default 250,000 each): the least recently messaged go first.
   */
  maxHandsets?: number;
  /**
   * Where the answers of Idempotency-Keys are kept across restarts (a file in
   * the data directory), so a client retrying after hermod restarted still gets
   * the first answer; without it they live in memory only.
   */
  idempotencyFile?: string;
  /** fsync each kept answer (HERMOD_JOURNAL_FSYNC). */
  fsync?: boolean;
  /** Told when the idempotency file could not be written (the answer stays kept in memory). */
  onFileError?: (err: unknown) => void;
  /** Clock (tests). */
  now?: () => number;
}

const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_MAX_ENTRIES = 1_000_000;
const DEFAULT_FINAL_TTL_MS = 60 * 1000;
const DEFAULT_KEYED_FINAL_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_MAX_FINAL_ENTRIES = 200_000;
const DEFAULT_MAX_HANDSETS = 250_000;

/**
 * Hot state in this process's memory. Bounded: every entry expires `ttlMs`
 * after its last write and each map holds at most `maxEntries`. A message is
 * one entry: its status, its time and its submitted and cancelled marks as one
 * number (message-entry.ts). A message whose status turns final moves, with its
 * carrier id, to a second queue of each map that keeps it `finalTtlMs`
 * and at most `maxFinalEntries` of them (as Redis hot state does with
 * HERMOD_STATE_FINAL_TTL), so at a steady rate the maps hold the messages in
 * flight plus the last minutes' finished ones, not a day's. Per-handset maps
 * hold at most `maxHandsets`. A Map iterates in insertion order, so the first
 * entries of each queue are the first written — the ones to expire or evict
 * first — and both checks cost O(1) per write, with no timer.
 *
 * Forgetting is safe by design: hot state is rebuilt from history, and a
 * message whose entry is gone accepts any status again (late reports for
 * messages that old are rare; history still orders them by stage).
 *
 * All operations run synchronously inside the promise, so concurrent callers
 * in this process can never interleave within one advance.
 */
export function createMemoryState(options: MemoryStateOptions = {}): HotState {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_ENTRIES);
  const finalTtlMs = Math.max(1, Math.min(ttlMs, options.finalTtlMs ?? DEFAULT_FINAL_TTL_MS));
  const maxFinal = Math.max(1, options.maxFinalEntries ?? DEFAULT_MAX_FINAL_ENTRIES);
  const maxHandsets = Math.max(1, options.maxHandsets ?? DEFAULT_MAX_HANDSETS);
  const now = options.now ?? Date.now;

  const messageMap = <V>(empty: V) => new BoundedMap<V>(ttlMs, maxEntries, empty, { ttlMs: finalTtlMs, max: maxFinal });
  // A message's status, time and marks as one number (message-entry.ts): no object per message.
  const messages = messageMap<number>(EMPTY_ENTRY);
  // Final statuses of keyed messages, beside the minute's: one number each.
  const keyedDone = new BoundedMap<number>(Math.max(finalTtlMs, options.keyedFinalTtlMs ?? DEFAULT_KEYED_FINAL_TTL_MS), maxFinal, EMPTY_ENTRY);
  const entryOf = (id: string, t: number): number | undefined => messages.get(id, t) ?? (keyedDone.size > 0 ? keyedDone.get(id, t) : undefined);
  const carrierIds = messageMap<string>('');
  // Messages sent in parts: how many, and the carrier ids of those delivered so far.
  const parts = messageMap<{ count: number; delivered: string[] } | undefined>(undefined);
  // Marks written after a message's final status (an attempt cancelled once it
  // failed, so a redelivered job of it is not sent) live the full time to live,
  // as they do in Redis, not the final status's minute: beside it, not in it.
  const lateMarks = messageMap<number>(EMPTY_ENTRY);
  const mark = (id: string, m: Mark, t: number): void => {
    const map = messages.isRetired(id) ? lateMarks : messages;
    map.set(id, withMark(map.get(id, t) ?? EMPTY_ENTRY, m), t);
  };
  const marked = (id: string, m: Mark, t: number): boolean => hasMark(messages.get(id, t), m) || (lateMarks.size > 0 && hasMark(lateMarks.get(id, t), m));
  // Sends claimed by a worker's try, with when each claim runs out; insertion order is expiry order (a renewal moves it last).
  const sendClaims = new Map<string, { token: string; expires: number }>();
  const lastMessages = new BoundedMap<LastMessage | undefined>(ttlMs, maxHandsets, undefined);
  const lastFromAddress = new BoundedMap<LastMessage | undefined>(ttlMs, maxHandsets, undefined);
  // Address → application → when it last sent from there.
  const senders = new BoundedMap<Map<string, number> | undefined>(ttlMs, maxHandsets, undefined);
  // Rate windows: key → the window (epoch second) and how much of it was taken.
  const rateWindows = new Map<string, { window: number; used: number }>();
  let lastWindow = 0;
  // Opt-outs never expire here: core loads them from history at start.
  const optOuts = new Set<string>();
  // Idempotency keys carry their own expiry time. Keys are claimed with one
  // time to live (HERMOD_IDEMPOTENCY_TTL), so insertion order is expiry
  // order: every claim drops the expired ones from the front.
  // `claim` names the claim that holds the key, or that stored its answer
  // (answers read back from the file have none: no claim is still running).
  const idempotency = new FifoMap<string, { record: IdempotencyRecord; expires: number; claim?: string }>();
  const answers = options.idempotencyFile ? openIdempotencyFile(options.idempotencyFile, now(), options.fsync ?? false) : undefined;
  for (const a of answers?.kept ?? []) idempotency.set(a.key, { record: a.record, expires: a.expires });
  let rewriteAfter = 0;
  /** The answers still to be given again, for rewriting the file without the expired ones. */
  function* liveAnswers(t: number): Iterable<KeptAnswer> {
    for (const [key, { record, expires }] of idempotency.entries())
      if (record.response !== undefined && expires > t) yield { key, record: { fingerprint: record.fingerprint, response: record.response }, expires };
  }
  const idempotencyGet = (key: string, t: number) => {
    const entry = idempotency.get(key);
    if (entry && entry.expires <= t) idempotency.delete(key);
    return entry && entry.expires > t ? entry : undefined;
  };
  const expireAll = (t: number): void => {
    for (const map of [messages, keyedDone, lateMarks, carrierIds, parts, lastMessages, lastFromAddress, senders]) map.expire(t);
    expireFront(idempotency, t);
    const window = Math.floor(t / 1000);
    for (const [k, w] of rateWindows) if (w.window < window) rateWindows.delete(k);
  };
  // What this state holds, for hermod_memory_entries (each read drops what has expired first).
  const untrack = trackEntries(
    {
      'state:statuses': () => messages.size + keyedDone.size + lateMarks.size,
      'state:carrier_ids': () => carrierIds.size + parts.size,
      'state:last_messages': () => lastMessages.size + lastFromAddress.size + senders.size,
      'state:idempotency_keys': () => idempotency.size,
      'state:rate_windows': () => rateWindows.size,
      'state:send_claims': () => sendClaims.size,
    },
    () => expireAll(now()),
  );
  let closed = false;

  const open = (): void => {
    if (closed) throw new HermodError('unavailable', 'hot state is closed');
  };

  /** Moves each message forward (see HotState.advanceStatusesNotingSkips). */
  async function advanceNotingSkips(advances: readonly StatusAdvance[]): Promise<AdvanceOutcome[]> {
    open();
    const t = now();
    messages.expire(t);
    keyedDone.expire(t);
    carrierIds.expire(t);
    return advances.map((a): AdvanceOutcome => {
      const current = entryOf(a.id, t);
      const status = statusOf(current)?.status;
      if (!canAdvance(status, a.status, a.channel)) return ADVANCE_REFUSED;
      if (a.onceSubmitted && (status === undefined || stageOf(status) < SUBMITTED_STAGE)) return ADVANCE_REFUSED;
      messages.set(a.id, withStatus(current ?? EMPTY_ENTRY, a.status, a.at), t);
      if (isFinal(a.status)) {
        messages.retire(a.id, t);
        if (hasHashedMark(a.id)) keyedDone.set(a.id, withStatus(EMPTY_ENTRY, a.status, a.at), t);
        if (a.carrierId) carrierIds.retire(a.carrierId, t);
        if (parts.size > 0) parts.retire(a.id, t);
      }
      if (status === 'queued') return ADVANCE_AFTER_QUEUED;
      return status === 'accepted' && passesThroughQueue(a.status) ? ADVANCE_SKIPPED_QUEUED : ADVANCE_APPLIED;
    });
  }

  return {
    ...createMemoryScreening(now, open),
    ...createMemoryCarrierSnapshots(now, open),
    ...createMemoryCampaignControl(open),

    async advanceStatuses(advances) {
      return (await advanceNotingSkips(advances)).map((o) => o !== ADVANCE_REFUSED);
    },

    advanceStatusesNotingSkips: (advances) => advanceNotingSkips(advances),

    async getStatus(id): Promise<StatusEntry | undefined> {
      open();
      return statusOf(entryOf(id, now()));
    },

    async rememberLastMessages(entries) {
      open();
      const t = now();
      lastMessages.expire(t);
      lastFromAddress.expire(t);
      senders.expire(t);
      for (const e of entries) {
        const last = { messageId: e.messageId, applicationId: e.applicationId };
        const handset = handsetKey(e.handset);
        lastMessages.set(handset, last, t);
        if (!e.source) continue;
        lastFromAddress.set(`${e.source}\n${handset}`, last, t);
        const apps = senders.get(e.source, t) ?? new Map<string, number>();
        apps.set(e.applicationId, t);
        senders.set(e.source, apps, t);
      }
    },

    async rememberSenders(entries) {
      open();
      const t = now();
      senders.expire(t);
      for (const e of entries) {
        if (!e.address || e.at + ttlMs <= t) continue;
        const apps = senders.get(e.address, t) ?? new Map<string, number>();
        apps.set(e.applicationId, Math.max(e.at, apps.get(e.applicationId) ?? 0));
        senders.set(e.address, apps, t);
      }
    },

    async getLastMessage(handset) {
      open();
      return lastMessages.get(handsetKey(handset), now());
    },

    async getReplyContext(written, address): Promise<ReplyContext> {
      open();
      const handset = handsetKey(written);
      const t = now();
      const apps = address ? senders.get(address, t) : undefined;
      return {
        lastToHandset: lastMessages.get(handset, t),
        lastFromAddress: address ? lastFromAddress.get(`${address}\n${handset}`, t) : undefined,
        sendersOfAddress: apps ? [...apps].filter(([, at]) => at + ttlMs > t).map(([app]) => app) : [],
      };
    },

    async takeRateTokens(key, limitPerSecond, wanted): Promise<RateGrant> {
      open();
      const t = now();
      const window = Math.floor(t / 1000);
      let entry = rateWindows.get(key);
      if (!entry || entry.window !== window) {
        // Windows of other keys that have passed are worth nothing: drop them
        // when the first key of a new second starts its window (once a second).
        if (window > lastWindow) {
          lastWindow = window;
          for (const [k, w] of rateWindows) if (w.window < window) rateWindows.delete(k);
        }
        entry = { window, used: 0 };
        rateWindows.set(key, entry);
      }
      const granted = Math.max(0, Math.min(Math.floor(wanted), Math.floor(limitPerSecond) - entry.used));
      entry.used += granted;
      return { granted, windowEndsInMs: (window + 1) * 1000 - t };
    },

    // In core's own memory: the lists are lost only with core, which loads them again as it starts.
    screeningMissing: async () => (open(), []),
    dataLost: async () => (open(), false),
    holdLease: async () => (open(), undefined),
    screeningRefused: async () => (open(), []),
    beginScreeningLoad: async () => (open(), ''),
    markScreeningLoaded: async () => (open(), true),

    async setOptOuts(entries) {
      open();
      for (const e of entries) {
        if (e.optedOut) optOuts.add(`${e.applicationId}\n${handsetKey(e.handset)}`);
        else optOuts.delete(`${e.applicationId}\n${handsetKey(e.handset)}`);
      }
    },

    async areOptedOut(pairs) {
      open();
      return pairs.map((p) => optOuts.has(`${p.applicationId}\n${handsetKey(p.handset)}`));
    },

    async claimIdempotencyKey(key, fingerprint, claim, ttl) {
      open();
      const t = now();
      expireFront(idempotency, t);
      const existing = idempotencyGet(key, t);
      if (existing) return existing.record;
      if (idempotency.size >= maxEntries) idempotency.shift();
      idempotency.set(key, { record: { fingerprint }, expires: t + ttl, claim });
      return undefined;
    },

    async renewIdempotencyKey(key, claim, ttl) {
      open();
      const t = now();
      const held = idempotencyGet(key, t);
      if (held?.claim !== claim || held.record.response !== undefined) return false;
      // To the back, as its expiry is now among the latest.
      idempotency.delete(key);
      idempotency.set(key, { ...held, expires: t + ttl });
      return true;
    },

    async completeIdempotencyKey(key, claim, record, ttl) {
      open();
      const t = now();
      const held = idempotencyGet(key, t);
      // '' (a gateway from before claim ids) or a key claimed before them: as before claim ids.
      if (held && claim !== '' && held.claim !== undefined && held.claim !== claim) return false;
      if (held?.record.response !== undefined) return true;
      // To the back, among the latest to expire: the claim it replaces held a shorter lease.
      idempotency.delete(key);
      idempotency.set(key, { record, expires: t + ttl, claim });
      if (!answers) return true;
      // The answer was given: a disk that fails now costs it only across a restart, so the caller is not failed for it.
      try {
        answers.file.keep({ key, record, expires: t + ttl });
      } catch (err) {
        options.onFileError?.(err);
        return true;
      }
      // Expired answers and keys asked again leave dead lines: the file is rewritten once they are half of it.
      if (answers.file.lines <= Math.max(1000, 2 * idempotency.size, rewriteAfter)) return true;
      try {
        answers.file.rewrite(liveAnswers(t));
      } catch (err) {
        rewriteAfter = answers.file.lines + 1000; // not tried again at every answer
        options.onFileError?.(err);
      }
      return true;
    },

    async releaseIdempotencyKey(key, claim) {
      open();
      const held = idempotencyGet(key, now());
      if (held && held.record.response === undefined && (claim === '' || held.claim === undefined || held.claim === claim)) idempotency.delete(key);
    },

    async putCarrierIds(pairs) {
      open();
      const t = now();
      carrierIds.expire(t);
      messages.expire(t);
      lateMarks.expire(t);
      parts.expire(t);
      const counts = new Map<string, number>();
      for (const p of pairs) {
        carrierIds.set(p.carrierId, p.messageId, t);
        mark(p.messageId, SUBMITTED, t);
        counts.set(p.messageId, (counts.get(p.messageId) ?? 0) + 1);
      }
      for (const [id, count] of counts) if (count > 1) parts.set(id, { count, delivered: [] }, t);
    },

    async deliveredWhole(reports) {
      open();
      const t = now();
      return reports.map(({ messageId, carrierId }) => {
        const sent = parts.get(messageId, t);
        if (!sent) return true;
        if (!sent.delivered.includes(carrierId)) sent.delivered.push(carrierId);
        if (sent.delivered.length < sent.count) return false;
        parts.retire(messageId, t);
        return true;
      });
    },

    async wereSubmitted(messageIds) {
      open();
      const t = now();
      return messageIds.map((id) => marked(id, SUBMITTED, t));
    },

    async cancelSends(messageIds) {
      open();
      const t = now();
      messages.expire(t);
      lateMarks.expire(t);
      for (const id of messageIds) mark(id, CANCELLED, t);
    },

    async claimSends(claims, ttlMs) {
      open();
      const t = now();
      for (const [id, claim] of sendClaims) {
        if (claim.expires > t) break;
        sendClaims.delete(id);
      }
      return claims.map(({ messageId, token }) => {
        const held = sendClaims.get(messageId);
        if (held && held.expires > t && held.token !== token) return false;
        sendClaims.delete(messageId);
        sendClaims.set(messageId, { token, expires: t + ttlMs });
        return true;
      });
    },

    async releaseSends(claims) {
      open();
      for (const { messageId, token } of claims) if (sendClaims.get(messageId)?.token === token) sendClaims.delete(messageId);
    },

    async wereCancelled(messageIds) {
      open();
      const t = now();
      return messageIds.map((id) => marked(id, CANCELLED, t));
    },

    async getMessageIdByCarrierId(carrierId) {
      open();
      return carrierIds.get(carrierId, now());
    },

    async close() {
      closed = true;
      untrack();
      messages.clear();
      lateMarks.clear();
      carrierIds.clear();
      parts.clear();
      sendClaims.clear();
      lastMessages.clear();
      lastFromAddress.clear();
      senders.clear();
      rateWindows.clear();
      idempotency.clear();
      answers?.file.close();
    },
  };
}

function expireFront(queue: FifoMap<string, { expires: number }>, now: number): void {
  for (let key = queue.oldestKey(); key !== undefined && queue.get(key)!.expires <= now; key = queue.oldestKey()) queue.delete(key);
}
