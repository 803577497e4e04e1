import { randomUUID } from 'node:crypto';
import type { BatchHandler, Bus, BusRecord, BusValue, DeliveredRecord, PublishOptions, SubscribeOptions, Subscription } from '../ports/bus';
import { HermodError } from '../../lib/errors';

export interface MemoryBusOptions {
  /** Partitions per topic (default 8). */
  partitions?: number;
  /** Wait before a batch whose handler rejected is handed out again; doubles per failure in a row (default 50 ms). */
  retryDelayMs?: number;
  /** Longest wait between redeliveries (default 2 s). */
  maxRetryDelayMs?: number;
  /**
   * How long Subscription.close waits for the batches its handler holds to
   * settle (default 10 s). A batch still unsettled then is handed to another
   * member of the group, and whatever its first handler does later is ignored.
   */
  closeTimeoutMs?: number;
}

const DEFAULT_MAX_BATCH = 256;

/**
 * The bus inside one process, with the semantics of the port.
 *
 * - A record goes to partition fnv1a(key) % partitions of its topic, so one
 *   key's records keep their order.
 * - Each consumer group has its own cursor per partition. The partitions are
 *   dealt round-robin to the group's live members in the order they joined
 *   (partition p → member p mod n), recomputed whenever a member joins or
 *   leaves; a partition whose batches are in a handler's hands moves only
 *   once they have settled, so no two members hold batches of one partition.
 * - Per partition and group, one batch (≤ the member's maxBatch) at a time, in
 *   order, or up to the member's `inFlight` side by side. Resolving
 *   acknowledges the batch (the group's position moves past the batches
 *   acknowledged in a row); rejecting hands it out again after a backoff, with
 *   `redeliveries` counting earlier hand-outs.
 * - publish() only appends and returns; delivery runs from one setImmediate
 *   per burst, so many publishes in a row become few large batches.
 *
 * Retention (the choice documented): a record is kept until every group that
 * exists on its topic has acknowledged it — and while a topic has no group at
 * all, everything published to it is kept, so a consumer that starts after the
 * producers loses nothing. A group is never forgotten while the bus lives: a
 * member that joins an existing group later resumes at the group's cursor,
 * and so receives everything the group has not acknowledged. A group created
 * later starts at the oldest record still retained, i.e. it sees what no
 * existing group has acknowledged yet, not what was already released.
 * Memory is therefore bounded by what the slowest group has not acknowledged.
 */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const partitions = Math.max(1, Math.trunc(options.partitions ?? 8));
  const retryDelayMs = options.retryDelayMs ?? 50;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 2000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;

  const topics = new Map<string, Topic>();
  const members = new Set<Member>();
  const dirty = new Set<Group>();
  let pumpScheduled: NodeJS.Immediate | undefined;
  let closed = false;

  const topicOf = (name: string): Topic => {
    let topic = topics.get(name);
    if (!topic) {
      topic = {
        name,
        logs: Array.from({ length: partitions }, () => new PartitionLog()),
        groups: new Map(),
        waiters: Array.from({ length: partitions }, () => []),
      };
      topics.set(name, topic);
    }
    return topic;
  };

  const markDirty = (group: Group): void => {
    dirty.add(group);
    if (!pumpScheduled && !closed) pumpScheduled = setImmediate(pump);
  };

  function pump(): void {
    pumpScheduled = undefined;
    const groups = [...dirty];
    dirty.clear();
    for (const group of groups) for (const cursor of group.cursors) dispatch(cursor);
  }

  /**
   * Hands one partition's batches to its owner: a failed one whose backoff is
   * over, then new ones while the owner holds fewer than its inFlight. A
   * partition moves to another member only once no batch of it is in a
   * former owner's hands.
   */
  function dispatch(cursor: Cursor): void {
    const { group } = cursor;
    if (closed || group.members.length === 0) return;
    const member = group.members[cursor.partition % group.members.length]!;
    const { deliveries } = cursor;
    for (const d of deliveries) if (d.state === 'out' && d.member !== member) return;
    for (const d of deliveries) if (d.state === 'due') hand(d, member);
    const log = group.topic.logs[cursor.partition]!;
    while (deliveries.length < member.inFlightMax) {
      const from = deliveries.length > 0 ? deliveries[deliveries.length - 1]!.to : cursor.committed;
      if (from >= log.end) return;
      const delivery: Delivery = { cursor, member, from, to: Math.min(log.end, from + member.maxBatch), state: 'out', handing: 0 };
      deliveries.push(delivery);
      hand(delivery, member);
    }
  }

  /** Gives `delivery`'s records to `member`'s handler. */
  function hand(delivery: Delivery, member: Member): void {
    const { cursor, from, to } = delivery;
    const { group } = cursor;
    const log = group.topic.logs[cursor.partition]!;
    const records: DeliveredRecord[] = new Array(to - from);
    for (let offset = from; offset < to; offset++) {
      const entry = log.at(offset);
      let redeliveries = 0;
      if (offset < cursor.handedOutTo) {
        redeliveries = cursor.handedOut.get(offset) ?? 1;
        cursor.handedOut.set(offset, redeliveries + 1);
      }
      records[offset - from] = {
        key: entry.key,
        value: entry.value,
        topic: group.topic.name,
        partition: cursor.partition,
        offset: String(offset),
        redeliveries,
      };
    }
    cursor.handedOutTo = Math.max(cursor.handedOutTo, to);

    delivery.member = member;
    delivery.state = 'out';
    const handing = ++delivery.handing;
    member.inFlight.add(delivery);
    Promise.resolve()
      .then(() => member.handler(records))
      .then(
        () => settle(delivery, handing, member, true),
        () => settle(delivery, handing, member, false),
      );
  }

  function settle(delivery: Delivery, handing: number, member: Member, acknowledged: boolean): void {
    const { cursor } = delivery;
    member.inFlight.delete(delivery);
    member.onSettled?.();
    // Released already (its member closed and gave up waiting): the batch
    // belongs to someone else now, and this outcome no longer counts.
    if (delivery.handing !== handing || delivery.state !== 'out' || !cursor.deliveries.includes(delivery)) return;
    if (acknowledged) {
      delivery.state = 'done';
      cursor.failures = 0;
      const { deliveries } = cursor;
      let committed = cursor.committed;
      while (deliveries.length > 0 && deliveries[0]!.state === 'done') committed = deliveries.shift()!.to;
      if (committed !== cursor.committed) {
        cursor.committed = committed;
        if (cursor.handedOut.size > 0) for (const offset of cursor.handedOut.keys()) if (offset < committed) cursor.handedOut.delete(offset);
        release(cursor.group.topic, cursor.partition);
        wakeDurabilityWaiters(cursor.group.topic, cursor.partition);
      }
    } else if (!closed) {
      cursor.failures += 1;
      const delay = Math.min(maxRetryDelayMs, retryDelayMs * 2 ** (cursor.failures - 1));
      delivery.state = 'waiting';
      delivery.retryTimer = setTimeout(() => {
        delivery.retryTimer = undefined;
        delivery.state = 'due';
        markDirty(cursor.group);
      }, delay);
    }
    markDirty(cursor.group);
  }

  /** Resolves the publishes waiting for offsets that every group of the partition's topic has acknowledged now. */
  function wakeDurabilityWaiters(topic: Topic, partition: number): void {
    const waiters = topic.waiters[partition]!;
    if (waiters.length === 0) return;
    let lowest = Infinity;
    for (const group of topic.groups.values()) lowest = Math.min(lowest, group.cursors[partition]!.committed);
    let kept = 0;
    for (const w of waiters) {
      if (w.offset < lowest) w.resolve();
      else waiters[kept++] = w;
    }
    waiters.length = kept;
  }

  /** Drops the records of a partition that every group has acknowledged. */
  function release(topic: Topic, partition: number): void {
    let lowest = Infinity;
    for (const group of topic.groups.values()) lowest = Math.min(lowest, group.cursors[partition]!.committed);
    if (lowest !== Infinity) topic.logs[partition]!.dropBefore(lowest);
  }

  function leave(member: Member): Promise<void> {
    member.closing ??= (async () => {
      const { group } = member;
      const index = group.members.indexOf(member);
      if (index >= 0) group.members.splice(index, 1);
      markDirty(group); // its idle partitions go to the others right away

      if (member.inFlight.size > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, closeTimeoutMs);
          member.onSettled = () => {
            if (member.inFlight.size === 0) done();
          };
          function done(): void {
            clearTimeout(timer);
            member.onSettled = undefined;
            resolve();
          }
        });
      }
      // Batches still unsettled are unacknowledged: hand them to the others now.
      for (const delivery of member.inFlight) {
        if (delivery.state === 'out') delivery.state = 'due';
        markDirty(delivery.cursor.group);
      }
      member.inFlight.clear();
      members.delete(member);
    })();
    return member.closing;
  }

  return {
    local: true,
    async lag(topicName: string, groupName: string) {
      const topic = topics.get(topicName);
      const group = topic?.groups.get(groupName);
      if (!topic) return 0;
      // A group that never joined would start at the oldest record retained: all of them wait for it.
      if (!group) return topic.logs.reduce((sum, log) => sum + (log.end - log.start), 0);
      return group.cursors.reduce((sum, cursor, p) => sum + (topic.logs[p]!.end - cursor.committed), 0);
    },
    async publish(topicName: string, records: readonly BusRecord[], publishOptions?: PublishOptions) {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      if (records.length === 0) return;
      const topic = topicOf(topicName);
      const last = new Map<number, number>();
      for (const record of records) {
        const partition = fnv1a(record.key) % partitions;
        const log = topic.logs[partition]!;
        last.set(partition, log.end);
        log.append(record.key, record.value);
      }
      for (const group of topic.groups.values()) markDirty(group);
      // Nobody subscribed: nothing here will make them durable, so there is nothing to wait for.
      if (!publishOptions?.untilDurable || topic.groups.size === 0) return;
      await Promise.all(
        [...last].map(([partition, offset]) => new Promise<void>((resolve, reject) => topic.waiters[partition]!.push({ offset, resolve, reject }))),
      );
    },

    async subscribe(topicName: string, handler: BatchHandler, subscribeOptions: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      const topic = topicOf(topicName);
      let group = topic.groups.get(subscribeOptions.group);
      if (!group) {
        const created: Group = { name: subscribeOptions.group, topic, members: [], cursors: [] };
        created.cursors = topic.logs.map((log, partition) => ({
          group: created,
          partition,
          committed: log.start,
          handedOutTo: log.start,
          handedOut: new Map(),
          deliveries: [],
          failures: 0,
        }));
        topic.groups.set(created.name, created);
        group = created;
      }
      const member: Member = {
        name: subscribeOptions.consumer ?? randomUUID(),
        group,
        handler,
        maxBatch: Math.max(1, Math.trunc(subscribeOptions.maxBatch ?? DEFAULT_MAX_BATCH)),
        inFlightMax: Math.max(1, Math.trunc(subscribeOptions.inFlight ?? 1)),
        inFlight: new Set(),
      };
      group.members.push(member);
      members.add(member);
      markDirty(group);
      return { close: () => leave(member) };
    },

    async close() {
      if (closed) return;
      closed = true;
      // Members finish (or give up) the batches in their hands; nothing new is handed out.
      await Promise.all([...members].map(leave));
      if (pumpScheduled) clearImmediate(pumpScheduled);
      pumpScheduled = undefined;
      for (const topic of topics.values())
        for (const group of topic.groups.values())
          for (const cursor of group.cursors)
            for (const d of cursor.deliveries) {
              if (d.retryTimer) clearTimeout(d.retryTimer);
              d.retryTimer = undefined;
            }
      dirty.clear();
      for (const topic of topics.values()) {
        for (const waiters of topic.waiters) for (const w of waiters) w.reject(new HermodError('unavailable', 'bus closed before the records were handled'));
      }
      topics.clear();
    },
  };
}

interface Topic {
  name: string;
  logs: PartitionLog[];
  groups: Map<string, Group>;
  /** Per partition: publishes waiting until every group has acknowledged `offset`. */
  waiters: { offset: number; resolve: () => void; reject: (err: Error) => void }[][];
}

interface Group {
  name: string;
  topic: Topic;
  /** Live members in join order; closing members are already removed. */
  members: Member[];
  cursors: Cursor[];
}

/** One group's position in one partition. */
interface Cursor {
  group: Group;
  partition: number;
  /** Every offset below this is acknowledged. */
  committed: number;
  /** Every offset below this has been handed out at least once. */
  handedOutTo: number;
  /** Offsets handed out more than once and not yet acknowledged → times handed out. */
  handedOut: Map<number, number>;
  /** The batches from `committed` on, in order: out, acknowledged (done) after one still out, or failed. */
  deliveries: Delivery[];
  /** Consecutive failed batches (backoff). */
  failures: number;
}

interface Member {
  name: string;
  group: Group;
  handler: BatchHandler;
  maxBatch: number;
  /** Batches of one partition it may hold at once. */
  inFlightMax: number;
  inFlight: Set<Delivery>;
  closing?: Promise<void>;
  onSettled?: () => void;
}

interface Delivery {
  cursor: Cursor;
  /** Who holds it, or held it last. */
  member: Member;
  /** The batch is [from, to). */
  from: number;
  to: number;
  /** out: in a handler's hands; done: acknowledged, behind one still out; waiting: failed, in its backoff; due: to be handed out again. */
  state: 'out' | 'done' | 'waiting' | 'due';
  /** Counts hand-outs: the outcome of an earlier one no longer counts. */
  handing: number;
  retryTimer?: NodeJS.Timeout;
}

/** The retained records of one partition: offsets [start, end). */
class PartitionLog {
  private items: (BusRecord | undefined)[] = [];
  /** Index in `items` of the record at offset `start`. */
  private head = 0;
  /** Offset of the oldest retained record. */
  start = 0;

  get end(): number {
    return this.start + this.items.length - this.head;
  }

  append(key: string, value: BusValue): void {
    this.items.push({ key, value });
  }

  at(offset: number): BusRecord {
    return this.items[this.head + offset - this.start]!;
  }

  dropBefore(offset: number): void {
    const n = Math.min(offset, this.end) - this.start;
    if (n <= 0) return;
    for (let i = this.head; i < this.head + n; i++) this.items[i] = undefined;
    this.head += n;
    this.start += n;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
      return;
    }
    // Compact once the dropped prefix dominates, so memory follows what is retained.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

/** 32-bit FNV-1a over the key's UTF-16 code units: fast, stable, well spread. */
export function fnv1a(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
