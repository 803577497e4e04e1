import { canAdvance, type MessageStatus } from '../domain/message-status';
import type { IdempotencyRecord, HotState, LastMessage, RateGrant, ReplyContext, StatusEntry } from '../ports/state';
import { HermodError } from '../../lib/errors';
import { createMemoryScreening } from './memory-screening-state';

export interface MemoryStateOptions {
  /** How long an entry lives after its last write (default 24 h). */
  ttlMs?: number;
  /**
   * Most entries kept per map (statuses, carrier ids; default 1,000,000 each).
   * Past it the least recently written entries are dropped first.
   */
  maxEntries?: number;
  /** Clock (tests). */
  now?: () => number;
}

const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
const DEFAULT_MAX_ENTRIES = 1_000_000;

/**
 * Hot state in this process's memory. Bounded: every entry expires `ttlMs`
 * after its last write and each map holds at most `maxEntries`. A Map iterates
 * in insertion order and a write re-inserts its key, so the first entries are
 * always the least recently written — the ones to expire or evict first — and
 * both checks cost O(1) per write, with no timer.
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
  const now = options.now ?? Date.now;

  const statuses = new BoundedMap<{ status: MessageStatus; at: number }>(ttlMs, maxEntries);
  const carrierIds = new BoundedMap<string>(ttlMs, maxEntries);
  const submitted = new BoundedMap<true>(ttlMs, maxEntries);
  const cancelled = new BoundedMap<true>(ttlMs, maxEntries);
  const lastMessages = new BoundedMap<LastMessage>(ttlMs, maxEntries);
  const lastFromAddress = new BoundedMap<LastMessage>(ttlMs, maxEntries);
  // Address → application → when it last sent from there.
  const senders = new BoundedMap<Map<string, number>>(ttlMs, maxEntries);
  // Rate windows: key → the window (epoch second) and how much of it was taken.
  const rateWindows = new Map<string, { window: number; used: number }>();
  // Opt-outs never expire here: core loads them from history at start.
  const optOuts = new Set<string>();
  // Idempotency keys carry their own expiry time.
  const idempotency = new Map<string, { record: IdempotencyRecord; expires: number }>();
  const idempotencyGet = (key: string, t: number) => {
    const entry = idempotency.get(key);
    if (entry && entry.expires <= t) idempotency.delete(key);
    return entry && entry.expires > t ? entry.record : undefined;
  };
  let closed = false;

  const open = (): void => {
    if (closed) throw new HermodError('unavailable', 'hot state is closed');
  };

  return {
    ...createMemoryScreening(now, open),

    async advanceStatuses(advances) {
      open();
      const t = now();
      statuses.expire(t);
      return advances.map((a) => {
        const current = statuses.get(a.id, t);
        if (!canAdvance(current?.status, a.status)) return false;
        statuses.set(a.id, { status: a.status, at: a.at }, t);
        return true;
      });
    },

    async getStatus(id): Promise<StatusEntry | undefined> {
      open();
      const entry = statuses.get(id, now());
      return entry ? { status: entry.status, at: entry.at } : undefined;
    },

    async rememberLastMessages(entries) {
      open();
      const t = now();
      lastMessages.expire(t);
      lastFromAddress.expire(t);
      senders.expire(t);
      for (const e of entries) {
        const last = { messageId: e.messageId, applicationId: e.applicationId };
        lastMessages.set(e.handset, last, t);
        if (!e.source) continue;
        lastFromAddress.set(`${e.source}\n${e.handset}`, last, t);
        const apps = senders.get(e.source, t) ?? new Map<string, number>();
        apps.set(e.applicationId, t);
        senders.set(e.source, apps, t);
      }
    },

    async getLastMessage(handset) {
      open();
      return lastMessages.get(handset, now());
    },

    async getReplyContext(handset, address): Promise<ReplyContext> {
      open();
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
        // Windows of other keys that have passed are worth nothing: drop them now and then.
        if (rateWindows.size >= maxEntries) for (const [k, w] of rateWindows) if (w.window < window) rateWindows.delete(k);
        entry = { window, used: 0 };
        rateWindows.set(key, entry);
      }
      const granted = Math.max(0, Math.min(Math.floor(wanted), Math.floor(limitPerSecond) - entry.used));
      entry.used += granted;
      return { granted, windowEndsInMs: (window + 1) * 1000 - t };
    },

    async setOptOuts(entries) {
      open();
      for (const e of entries) {
        if (e.optedOut) optOuts.add(`${e.applicationId}\n${e.handset}`);
        else optOuts.delete(`${e.applicationId}\n${e.handset}`);
      }
    },

    async areOptedOut(pairs) {
      open();
      return pairs.map((p) => optOuts.has(`${p.applicationId}\n${p.handset}`));
    },

    async claimIdempotencyKey(key, fingerprint, ttl) {
      open();
      const t = now();
      const existing = idempotencyGet(key, t);
      if (existing) return existing;
      if (idempotency.size >= maxEntries) idempotency.delete(idempotency.keys().next().value as string);
      idempotency.set(key, { record: { fingerprint }, expires: t + ttl });
      return undefined;
    },

    async completeIdempotencyKey(key, record, ttl) {
      open();
      idempotency.set(key, { record, expires: now() + ttl });
    },

    async releaseIdempotencyKey(key) {
      open();
      idempotency.delete(key);
    },

    async putCarrierIds(pairs) {
      open();
      const t = now();
      carrierIds.expire(t);
      submitted.expire(t);
      for (const p of pairs) {
        carrierIds.set(p.carrierId, p.messageId, t);
        submitted.set(p.messageId, true, t);
      }
    },

    async wereSubmitted(messageIds) {
      open();
      const t = now();
      return messageIds.map((id) => submitted.get(id, t) === true);
    },

    async cancelSends(messageIds) {
      open();
      const t = now();
      cancelled.expire(t);
      for (const id of messageIds) cancelled.set(id, true, t);
    },

    async wereCancelled(messageIds) {
      open();
      const t = now();
      return messageIds.map((id) => cancelled.get(id, t) === true);
    },

    async getMessageIdByCarrierId(carrierId) {
      open();
      return carrierIds.get(carrierId, now());
    },

    async close() {
      closed = true;
      statuses.clear();
      carrierIds.clear();
      submitted.clear();
      cancelled.clear();
      lastMessages.clear();
      lastFromAddress.clear();
      senders.clear();
      rateWindows.clear();
    },
  };
}

/** A Map whose entries expire `ttlMs` after their last write, holding at most `max` of them. */
class BoundedMap<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now: number): void {
    // An existing key is updated in place: no delete and re-insert, no new
    // object (a message's status is written several times within seconds).
    // Insertion order is then first-write order, which is what the size bound
    // and expire() need: a key rewritten later only lives a little longer.
    const entry = this.entries.get(key);
    if (entry) {
      entry.value = value;
      entry.expires = now + this.ttlMs;
      return;
    }
    this.entries.set(key, { value, expires: now + this.ttlMs });
    while (this.entries.size > this.max) this.dropOldest();
  }

  /** Drops expired entries from the front (the oldest first writes). */
  expire(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.expires > now) return;
      this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  private dropOldest(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
