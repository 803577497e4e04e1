/**
 * In-memory hot state under a campaign (core/adapters/memory-state.ts), in one
 * run: a message's status, submitted mark and cancelled mark as one entry
 * (message-entry.ts) against the baseline of one entry in each of three maps
 * (statuses, submitted, cancelled: what hot state held until the fourteenth
 * session), both on BoundedMap. Each message goes the way a campaign's does:
 * queued, checked for cancellation, its carrier id put and submitted, then
 * its receipt looked up by carrier id and received. First BENCH_MESSAGES
 * messages are queued and submitted (all in flight at once, a campaign's
 * fan-out ahead of its receipts), then all of them receive their receipts.
 *
 *   npx tsx bench/hot-state-bench.ts
 *
 * Knobs: BENCH_MESSAGES (1000000), BENCH_BATCH messages a call (500).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { BoundedMap } from '../core/adapters/bounded-map';
import { createMemoryState } from '../core/adapters/memory-state';
import { canAdvance, isFinal, MESSAGE_STATUSES, type MessageStatus } from '../core/domain/message-status';
import { printTable } from './support/print-table';

const messages = Number(process.env.BENCH_MESSAGES ?? 1_000_000);
const batch = Number(process.env.BENCH_BATCH ?? 500);
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Steps {
  advance(advances: { id: string; status: MessageStatus; at: number; carrierId?: string }[]): Promise<boolean[]>;
  wereCancelled(ids: string[]): Promise<boolean[]>;
  putCarrierIds(pairs: { carrierId: string; messageId: string }[]): Promise<void>;
  getMessageIdByCarrierId(carrierId: string): Promise<string | undefined>;
}

/** The baseline: the three maps of messages as hot state had them (a status and its time as one number). */
function threeMaps(): Steps {
  const day = 24 * 60 * 60 * 1000;
  const map = <V>(empty: V) => new BoundedMap<V>(day, 1_000_000, empty, { ttlMs: 60_000, max: 200_000 });
  const statuses = map<number>(0);
  const carrierIds = map<string>('');
  const submitted = map<boolean>(false);
  const cancelled = map<boolean>(false);
  const index = new Map<MessageStatus, number>(MESSAGE_STATUSES.map((s, i) => [s, i]));
  const statusOf = (n: number) => MESSAGE_STATUSES[n - Math.floor(n / 32) * 32]!;
  return {
    async advance(advances) {
      const t = Date.now();
      for (const m of [statuses, carrierIds, submitted, cancelled]) m.expire(t);
      return advances.map((a) => {
        const current = statuses.get(a.id, t);
        if (!canAdvance(current === undefined ? undefined : statusOf(current), a.status)) return false;
        statuses.set(a.id, Math.round(a.at) * 32 + index.get(a.status)!, t);
        if (isFinal(a.status)) {
          statuses.retire(a.id, t);
          submitted.retire(a.id, t);
          cancelled.retire(a.id, t);
          if (a.carrierId) carrierIds.retire(a.carrierId, t);
        }
        return true;
      });
    },
    async wereCancelled(ids) {
      const t = Date.now();
      return ids.map((id) => cancelled.get(id, t) === true);
    },
    async putCarrierIds(pairs) {
      const t = Date.now();
      carrierIds.expire(t);
      submitted.expire(t);
      for (const p of pairs) {
        carrierIds.set(p.carrierId, p.messageId, t);
        submitted.set(p.messageId, true, t);
      }
    },
    async getMessageIdByCarrierId(carrierId) {
      return carrierIds.get(carrierId, Date.now());
    },
  };
}

function oneEntry(): Steps {
  const state = createMemoryState();
  return {
    advance: (a) => state.advanceStatuses(a),
    wereCancelled: (ids) => state.wereCancelled(ids),
    putCarrierIds: (pairs) => state.putCarrierIds(pairs),
    getMessageIdByCarrierId: (c) => state.getMessageIdByCarrierId(c),
  };
}

const ids = Array.from({ length: messages }, (_, i) => `0190f1c2-7b3a-8${String(i % 1000).padStart(3, '0')}-8000-${String(i).padStart(12, '0')}`);
const carrierIdOf = (i: number) => `${(0x5f3a0000 + i).toString(16)}`;

async function run(make: () => Steps): Promise<{ fanOutNs: number; receiptsNs: number; heapMb: number }> {
  gc();
  const before = process.memoryUsage().heapUsed;
  const s = make();
  const start = process.hrtime.bigint();
  for (let i = 0; i < messages; i += batch) {
    const part = ids.slice(i, i + batch);
    const at = Date.now();
    await s.advance(part.map((id) => ({ id, status: 'queued', at })));
    await s.wereCancelled(part);
    await s.putCarrierIds(part.map((id, k) => ({ carrierId: carrierIdOf(i + k), messageId: id })));
    await s.advance(part.map((id) => ({ id, status: 'submitted', at })));
  }
  const fannedOut = process.hrtime.bigint();
  gc();
  const heapMb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  const receipts = process.hrtime.bigint();
  for (let i = 0; i < messages; i += batch) {
    const advances = [];
    for (let k = i; k < Math.min(messages, i + batch); k++) {
      const carrierId = carrierIdOf(k);
      const id = await s.getMessageIdByCarrierId(carrierId);
      if (id !== ids[k]) throw new Error(`carrier id ${carrierId} gave ${id}, not ${ids[k]}`);
      advances.push({ id, status: 'received' as const, at: Date.now(), carrierId });
    }
    await s.advance(advances);
  }
  const done = process.hrtime.bigint();
  return { fanOutNs: Number(fannedOut - start) / messages, receiptsNs: Number(done - receipts) / messages, heapMb };
}

const rows: (string | number)[][] = [];
for (const [name, make] of [
  ['baseline: three maps (statuses, submitted, cancelled)', threeMaps],
  ['one entry a message', oneEntry],
  ['baseline again', threeMaps],
  ['one entry again', oneEntry],
] as const) {
  const r = await run(make);
  rows.push([name, r.fanOutNs.toFixed(0), r.receiptsNs.toFixed(0), r.heapMb.toFixed(0)]);
}
console.log(`hot state, ${messages} messages in flight, batches of ${batch}, node ${process.version}\n`);
printTable(
  [
    { title: 'layout' },
    { title: 'queued → submitted, ns/message', align: 'right' },
    { title: 'receipt → received, ns/message', align: 'right' },
    { title: 'heap held with all in flight, MB', align: 'right' },
  ],
  rows,
);
