import type { DeliveredRecord } from '../ports/bus';

/** One entry of a stream as XREADGROUP returns it: `fields` is null for an entry trimmed away while it was pending. */
interface StreamEntry {
  id: string;
  fields: Buffer[] | null;
}

/** The entries of one stream in an XREADGROUP reply. */
export interface StreamReply {
  key: string;
  entries: StreamEntry[];
}

/**
 * Reads an XREADGROUP reply: RESP2 (`[[key, entries], …]`), RESP3 with legacy
 * mapping (`[key, entries, key, entries, …]`), or a map.
 */
export function parseStreams(reply: unknown): StreamReply[] {
  if (reply === null || reply === undefined) return [];
  let pairs: [unknown, unknown][];
  if (reply instanceof Map) pairs = [...reply.entries()];
  else if (Array.isArray(reply)) {
    if (reply.length > 0 && Array.isArray(reply[0])) pairs = reply as [unknown, unknown][];
    else {
      pairs = [];
      for (let i = 0; i + 1 < reply.length; i += 2) pairs.push([reply[i], reply[i + 1]]);
    }
  } else if (typeof reply === 'object') pairs = Object.entries(reply as Record<string, unknown>);
  else return [];
  return pairs.map(([key, entries]) => ({
    key: String(key),
    entries: ((entries as unknown[] | null) ?? []).map((entry) => {
      const [id, fields] = entry as [unknown, unknown];
      return { id: String(id), fields: Array.isArray(fields) ? (fields as Buffer[]) : null };
    }),
  }));
}

/** The record a stream entry carries (fields `k`, the key, and `v`, the value; others are ignored), as delivered from `partition`. */
export function deliveredRecord(topic: string, partition: number, id: string, fields: Buffer[], redeliveries: number): DeliveredRecord {
  let key = '';
  let value: Buffer = Buffer.alloc(0);
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!.toString();
    if (name === 'k') key = fields[i + 1]!.toString();
    else if (name === 'v') value = fields[i + 1]!;
  }
  return { key, value, topic, partition, offset: id, redeliveries };
}

/** Delivery count per entry id, from an extended XPENDING reply (`[[id, consumer, idle, deliveries], …]`). */
export function deliveryCounts(pending: unknown): Map<string, number> {
  const deliveries = new Map<string, number>();
  for (const row of (pending as unknown[][] | null) ?? []) deliveries.set(String(row[0]), Number(row[3]));
  return deliveries;
}

/** Whether a consumer other than `consumer` holds pending entries, from a summary XPENDING reply (`[count, first, last, [[consumer, count], …]]`). */
export function othersHoldPending(summary: unknown, consumer: string): boolean {
  const holders = Array.isArray((summary as unknown[])[3]) ? ((summary as unknown[])[3] as unknown[][]) : [];
  return holders.some((h) => String(h[0]) !== consumer && Number(h[1]) > 0);
}

/**
 * What `group` has not acknowledged in one stream, from its XINFO GROUPS reply
 * (a list of field/value lists): `lag` is what the group has not read yet,
 * `pending` what it read and has not acknowledged. 0 when the reply is not a
 * list (no such stream yet); undefined when the group is not in it (it never
 * joined: it would read every entry the stream holds). Redis's lag is a
 * count it keeps, and after a restart from its append-only file it said 226
 * of an empty stream, for good: a group that has read up to the stream's last
 * entry (`lastId`) has nothing unread, whatever it says, and the rest is never
 * more than the stream's `length` (XLEN). A lag Redis cannot tell (nil) counts
 * nothing unread, as before.
 */
export function groupBacklog(groups: unknown, group: string, length?: number, lastId?: string): number | undefined {
  if (!Array.isArray(groups)) return 0;
  const info = groupInfo(groups, group);
  if (info) {
    const pending = Number(info.get('pending') ?? 0);
    const delivered = info.get('last-delivered-id');
    if (lastId !== undefined && delivered !== undefined && delivered !== null && compareIds(String(delivered), lastId) >= 0) return pending;
    const lag = info.get('lag');
    const unread = lag === null || lag === undefined ? 0 : Number(lag);
    return length === undefined ? unread + pending : Math.min(unread + pending, Math.max(length, pending));
  }
  return undefined;
}

/** The fields of `group` in an XINFO GROUPS reply (a list of field/value lists), if it is there. */
export function groupInfo(groups: unknown, group: string): Map<string, unknown> | undefined {
  if (!Array.isArray(groups)) return undefined;
  for (const fields of groups as unknown[][]) {
    const info = new Map<string, unknown>();
    for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]);
    if (info.get('name') === group) return info;
  }
  return undefined;
}

/** Orders two stream entry ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

/** The id of the entry an XREVRANGE … COUNT 1 reply holds, if any. */
export function lastEntryId(reply: unknown): string | undefined {
  const first = Array.isArray(reply) ? (reply[0] as unknown) : undefined;
  const id = Array.isArray(first) ? first[0] : undefined;
  return id === undefined || id === null ? undefined : String(id);
}
