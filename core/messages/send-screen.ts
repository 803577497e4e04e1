import type { Quota } from '../accounts/accounts';
import type { MessageRecord } from '../ports/message-history';
import type { HotState, QuotaTake } from '../ports/state';
import { quotaText } from '../domain/quota-text';
import { FifoMap } from '../../lib/fifo-map';
import type { Logger } from '../../lib/log';

/** What intake does with a message: send it, or end it at once with a final status and why. */
export type Verdict = { send: true } | { send: false; status: 'blocked' | 'deficient'; detail: string };

const SEND: Verdict = { send: true };
const HOUR_MS = 60 * 60 * 1000;
/** Quota counters this process has seeded (or seen made), so history is asked once per counter, not per batch. */
const SEEDED_KEPT = 10_000;
/** How long a send waits for history's count of a new counter; past it the counter starts without it, once. */
const SEED_WAIT_MS = 1000;

export interface SendScreen {
  /**
   * One verdict per record, in order. `quota: false` checks opt-outs and block lists only (a scheduled
   * message at its time: it took its quota when it was accepted).
   */
  screen(records: readonly MessageRecord[], options?: { quota?: boolean }): Promise<Verdict[]>;
  /**
   * Hot state lost data (a Redis back empty): its quota counters may have gone with it, so each counter is seeded
   * from history again at its next take (a counter still there keeps its count: a seed only starts a new one).
   */
  hotStateLost(): void;
}

/**
 * The checks before a message may go to a carrier: opt-outs (STOP replies),
 * operators' block lists, and the application's quota. Opt-outs and block
 * lists are read together in one hot-state round trip; only what passes both
 * takes from a quota (a second round trip, one counter per application of the
 * batch, and none for applications without a quota), so a blocked or opted-out
 * message never uses up quota. `exempt` records (opt-out confirmations) skip
 * the opt-out check and the quota, not the block lists.
 *
 * A period's counter counts from the messages history has of it: the first
 * take of a counter in this process carries what `usedSince` counts since the
 * period began, and hot state starts a counter it does not have from that. So
 * a quota set at noon counts the morning's sends, and an in-process hot state
 * started again (or a Redis that lost its keys before this process first took
 * from the counter) does not start the period over.
 */
export function createSendScreen(deps: {
  state: HotState;
  quotaOf: (applicationId: string) => Promise<Quota | undefined>;
  exempt: (record: MessageRecord) => boolean;
  /** The application's messages since `since` (ms) that took from its quota (history's count). */
  usedSince?: (applicationId: string, since: number) => Promise<number>;
  /** How long a send waits for `usedSince` (default 1 s). */
  seedWaitMs?: number;
  log?: Logger;
  now?: () => number;
}): SendScreen {
  const now = deps.now ?? Date.now;
  const seeded = new FifoMap<string, true>();
  const seedWaitMs = deps.seedWaitMs ?? SEED_WAIT_MS;
  /**
   * What a counter not yet seeded by this process starts from. `settled` false: history failed, and is asked again
   * next time. History slower than `seedWaitMs` (a month of a large history to count) does not hold sends up: the
   * counter starts without it, said in a warning, and is not asked about again.
   */
  const seedOf = async (take: QuotaTake, applicationId: string, since: number): Promise<{ seed?: number; settled: boolean }> => {
    if (!deps.usedSince || seeded.has(take.key)) return { settled: true };
    let timer: NodeJS.Timeout | undefined;
    try {
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), seedWaitMs);
      });
      const used = await Promise.race([deps.usedSince(applicationId, since), late]);
      if (used !== 'late') return { seed: used, settled: true };
      deps.log?.warn('quota counter started without the period’s earlier sends: history did not count them in time', {
        application: applicationId,
        waitedMs: seedWaitMs,
      });
      return { settled: true };
    } catch (err) {
      deps.log?.warn('quota counter started without the period’s earlier sends: history could not count them', { application: applicationId, err });
      return { settled: false };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    hotStateLost: () => seeded.clear(),
    async screen(records, options = {}) {
      if (records.length === 0) return [];
      const withQuota = options.quota !== false;
      const apps = withQuota ? [...new Set(records.map((r) => r.applicationId))] : [];
      const [optedOut, blocks, quotas] = await Promise.all([
        deps.state.areOptedOut(records.map((r) => ({ applicationId: r.applicationId, handset: r.destination }))),
        deps.state.findBlocks(records.map((r) => ({ applicationId: r.applicationId, destination: r.destination }))),
        Promise.all(apps.map(async (app) => [app, await deps.quotaOf(app)] as const)),
      ]);
      const verdicts: Verdict[] = records.map((r, i) => {
        const prefix = blocks[i];
        if (prefix !== undefined) return { send: false, status: 'blocked', detail: `destination blocked by the operator (${prefix})` };
        if (optedOut[i] && !deps.exempt(r)) return { send: false, status: 'blocked', detail: 'destination opted out' };
        return SEND;
      });
      // Per application with a quota: the messages still to send, in order.
      const t = now();
      const counted = new Map<string, { quota: Quota; take: QuotaTake; indexes: number[]; applicationId: string; since: number }>();
      const quotaByApp = new Map(quotas);
      records.forEach((r, i) => {
        const quota = quotaByApp.get(r.applicationId);
        if (!quota || !verdicts[i]!.send || deps.exempt(r)) return;
        let entry = counted.get(r.applicationId);
        if (!entry) {
          const period = quotaPeriod(quota.period, t);
          entry = {
            quota,
            take: { key: `${r.applicationId}|${quota.period}|${period.start}`, limit: quota.messages, wanted: 0, ttlMs: period.endsInMs + HOUR_MS },
            indexes: [],
            applicationId: r.applicationId,
            since: period.startMs,
          };
          counted.set(r.applicationId, entry);
        }
        entry.take.wanted++;
        entry.indexes.push(i);
      });
      if (counted.size === 0) return verdicts;
      const entries = [...counted.values()];
      const seeds = await Promise.all(entries.map((e) => seedOf(e.take, e.applicationId, e.since)));
      const granted = await deps.state.takeQuota(entries.map((e, j) => (seeds[j]!.seed === undefined ? e.take : { ...e.take, seed: seeds[j]!.seed })));
      entries.forEach((e, j) => {
        if (!seeds[j]!.settled) return;
        seeded.set(e.take.key, true);
        if (seeded.size > SEEDED_KEPT) seeded.shift();
      });
      entries.forEach((e, j) => {
        for (const i of e.indexes.slice(granted[j]!)) {
          verdicts[i] = { send: false, status: 'deficient', detail: `over the application's quota of ${quotaText(e.quota.messages, e.quota.period)}` };
        }
      });
      return verdicts;
    },
  };
}

/** The calendar period (UTC) that `t` falls in: its start (as a key) and how long it still runs. */
export function quotaPeriod(period: Quota['period'], t: number): { start: string; startMs: number; endsInMs: number } {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const start = period === 'hour' ? Date.UTC(y, m, d.getUTCDate(), d.getUTCHours()) : period === 'day' ? Date.UTC(y, m, d.getUTCDate()) : Date.UTC(y, m, 1);
  const end = period === 'hour' ? start + HOUR_MS : period === 'day' ? Date.UTC(y, m, d.getUTCDate() + 1) : Date.UTC(y, m + 1, 1);
  return { start: new Date(start).toISOString(), startMs: start, endsInMs: end - t };
}
