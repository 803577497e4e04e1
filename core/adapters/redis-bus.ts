import { randomUUID } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import type { BatchHandler, Bus, BusRecord, DeliveredRecord, SubscribeOptions, Subscription } from '../ports/bus';
import { HermodError } from '../../lib/errors';
import { createLogger, type Logger } from '../../lib/log';
import { fnv1a } from './memory-bus';
import { closeRedis, openRedis, pipelineResults, unavailable, watchErrors, type RedisConnectionOptions } from './redis-connection';
import { TRIM_ACKNOWLEDGED_LUA } from './redis-stream-trim';

export interface RedisBusOptions {
  redis: RedisConnectionOptions;
  /** Partitions (streams) per topic (default 8). Every process on a topic must agree on it. */
  partitions?: number;
  /** First part of every key (default `hermod`). */
  prefix?: string;
  /**
   * A pending entry idle this long counts as abandoned by its consumer and may
   * be claimed by the partition's next owner (default 5 s). A handler that
   * holds one batch longer than this is treated as stuck: its member stops
   * renewing that partition's lease, so the partition moves on without it.
   */
  claimIdleMs?: number;
  /** Longest wait of one blocking read (default 1 s). */
  blockMs?: number;
  /** Also trim each partition stream to about this many entries on publish (XADD MAXLEN ~), acknowledged or not; default: off. */
  maxLen?: number;
  /** How often the owner of a partition trims what every group of its stream has acknowledged (default 5 s). */
  trimEveryMs?: number;
  /** Acknowledged entries younger than this stay, so a group created just after a publish still sees it (default 10 s). */
  keepAcknowledgedMs?: number;
  /** Lifetime of a partition lease and of a group membership without renewal (default 5 s). */
  leaseMs?: number;
  /** How often members renew leases and rebalance partitions (default leaseMs / 3). */
  renewEveryMs?: number;
  /** Wait before a batch whose handler rejected is handed out again; doubles per failure in a row (default 50 ms). */
  retryDelayMs?: number;
  /** Longest wait between redeliveries (default 2 s). */
  maxRetryDelayMs?: number;
  /** How long Subscription.close waits for the batches its handler holds to settle (default 10 s). */
  closeTimeoutMs?: number;
}

const DEFAULT_MAX_BATCH = 256;
/** Idle time given to the pending entries of a partition that is handed back, so its next owner claims them at once. */
const HANDED_BACK_IDLE_MS = 24 * 60 * 60 * 1000;
/** Most entries one script or claim step moves at a time. */
const CLAIM_CHUNK = 1000;

/** KEYS[1] lease; ARGV: token, ms. Extends the lease only while it is still ours. */
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * KEYS[1] stream, KEYS[2] lease; ARGV: group, consumer, token, idle ms.
 * Hands a partition back: while the lease is still ours, marks our pending
 * entries of the stream as long idle (without counting a delivery) so the next
 * owner claims them right away, then deletes the lease. Atomic, so nobody can
 * take the partition between the two steps.
 */
const RELEASE_LUA = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
local start = '-'
while true do
  local pending = redis.pcall('XPENDING', KEYS[1], ARGV[1], start, '+', ${CLAIM_CHUNK}, ARGV[2])
  if type(pending) ~= 'table' or pending.err or #pending == 0 then break end
  local args = { KEYS[1], ARGV[1], ARGV[2], 0 }
  for _, entry in ipairs(pending) do args[#args + 1] = entry[1] end
  args[#args + 1] = 'IDLE'
  args[#args + 1] = ARGV[4]
  args[#args + 1] = 'JUSTID'
  redis.call('XCLAIM', unpack(args))
  if #pending < ${CLAIM_CHUNK} then break end
  start = '(' .. pending[#pending][1]
end
redis.call('DEL', KEYS[2])
return 1
`;

/**
 * KEYS[1] members (sorted set, score = expiry on the server clock); ARGV: id,
 * ttl ms, '1' to leave. Renews (or removes) this member, forgets expired ones
 * and returns the live members.
 */
const MEMBERS_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
if ARGV[3] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ttl * 3) end
return redis.call('ZRANGE', KEYS[1], 0, -1)
`;

/**
 * KEYS[1] stream; ARGV: group, our consumer, min idle ms. Deletes the other
 * consumers of the group on this stream that hold nothing and have been idle
 * a while (left behind by members that are gone). Atomic, so an entry can
 * never be handed to a consumer between the check and the delete.
 */
const PRUNE_LUA = `
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if type(consumers) ~= 'table' or consumers.err then return 0 end
local removed = 0
for _, c in ipairs(consumers) do
  local name, pending, idle
  for i = 1, #c, 2 do
    if c[i] == 'name' then name = c[i + 1] elseif c[i] == 'pending' then pending = c[i + 1] elseif c[i] == 'idle' then idle = c[i + 1] end
  end
  if name ~= nil and name ~= ARGV[2] and pending == 0 and idle ~= nil and idle >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    removed = removed + 1
  end
end
return removed
`;

interface Scripts {
  hermodLeaseRenew(lease: string, token: string, ms: number): Promise<number>;
  hermodLeaseRelease(stream: string, lease: string, group: string, consumer: string, token: string, idleMs: number): Promise<number>;
  hermodMembers(members: string, id: string, ttlMs: number, leave: '0' | '1'): Promise<string[]>;
  hermodPruneConsumers(stream: string, group: string, consumer: string, minIdleMs: number): Promise<number>;
  hermodTrimAcknowledged(stream: string, keepMs: number): Promise<number>;
}

interface Settings {
  partitions: number;
  prefix: string;
  claimIdleMs: number;
  blockMs: number;
  leaseMs: number;
  renewEveryMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  closeTimeoutMs: number;
  trimEveryMs: number;
  keepAcknowledgedMs: number;
}

/**
 * The bus on Redis Streams.
 *
 * Layout, per topic T and partition p (each stream in its own hash slot):
 * - `{<prefix>:T:p}` — the stream; a record goes to p = fnv1a(key) % partitions
 *   (the in-process bus' hash), fields `k` (key) and `v` (value).
 * - `{<prefix>:T:p}:owner:<group>` — the lease: which member of the group
 *   consumes p now (SET NX PX, renewed while held).
 * - `{<prefix>:T}:members:<group>` — the group's live members (sorted set
 *   scored by expiry on the Redis clock), for fair shares.
 *
 * publish() is one pipeline of XADDs. Consumer groups are created at `0`
 * (MKSTREAM), so a group sees everything still in the streams, including what
 * was published before it existed.
 *
 * Ownership: each member renews its leases and rebalances every renewEveryMs.
 * With n live members, one under ceil(P/n) takes free partitions; one over it
 * hands partitions back when another member has fewer than floor(P/n) (or two
 * fewer than it); a partition left free for a whole lease (its owner stuck or
 * dead) is adopted by anyone. A partition is consumed only by its lease holder,
 * one batch at a time, which keeps each key in order.
 *
 * Taking a partition over: the new owner first XAUTOCLAIMs the pending entries
 * idle for claimIdleMs, waits until no other consumer holds pending entries of
 * the stream, re-reads its own pending entries (XREADGROUP … 0; `redeliveries`
 * is their delivery count from XPENDING), and only then reads new ones (`>`).
 * A member that hands a partition back marks its pending entries long idle
 * first, so they move at once; a dead member's move after its lease expires
 * and they have been idle claimIdleMs.
 *
 * Delivery: each subscription has its own connection for one blocking
 * XREADGROUP (COUNT maxBatch, BLOCK blockMs) over its idle partitions; a
 * partition with records then runs on its own: handler, XACK (pipelined with a
 * non-blocking read of the next batch), until it runs dry and joins the
 * blocking read again (which is woken with CLIENT UNBLOCK when it must include
 * a partition). A rejected batch is handed out again after a backoff.
 *
 * Trimming: every trimEveryMs the owner of a partition removes the entries
 * that every group of the stream has acknowledged and that are older than
 * keepAcknowledgedMs (see redis-stream-trim.ts), so the streams stay about as
 * long as the slowest group's backlog. A group whose members are all gone holds
 * its entries until one comes back: delete such a group (XGROUP DESTROY) when
 * nobody will.
 *
 * Limits: the blocking read names several streams, so it runs against one
 * Redis (or one cluster node holding them all), not a cluster spreading the
 * partitions.
 */
export function createRedisBus(options: RedisBusOptions): Bus {
  const leaseMs = Math.max(50, options.leaseMs ?? 5000);
  const settings: Settings = {
    partitions: Math.max(1, Math.trunc(options.partitions ?? 8)),
    prefix: options.prefix ?? 'hermod',
    claimIdleMs: Math.max(0, options.claimIdleMs ?? 5000),
    blockMs: Math.max(1, Math.trunc(options.blockMs ?? 1000)),
    leaseMs,
    renewEveryMs: Math.max(10, options.renewEveryMs ?? Math.floor(leaseMs / 3)),
    retryDelayMs: options.retryDelayMs ?? 50,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 2000,
    closeTimeoutMs: options.closeTimeoutMs ?? 10_000,
    trimEveryMs: Math.max(10, options.trimEveryMs ?? 5000),
    keepAcknowledgedMs: Math.max(0, options.keepAcknowledgedMs ?? 10_000),
  };
  const maxLen = options.maxLen !== undefined ? Math.max(1, Math.trunc(options.maxLen)) : undefined;
  const log = createLogger({ component: 'redis-bus' });
  const cmd = openRedis(options.redis, { enableAutoPipelining: true }, log);
  cmd.defineCommand('hermodLeaseRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  cmd.defineCommand('hermodLeaseRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
  cmd.defineCommand('hermodMembers', { numberOfKeys: 1, lua: MEMBERS_LUA });
  cmd.defineCommand('hermodPruneConsumers', { numberOfKeys: 1, lua: PRUNE_LUA });
  cmd.defineCommand('hermodTrimAcknowledged', { numberOfKeys: 1, lua: TRIM_ACKNOWLEDGED_LUA });

  const subscribers = new Set<Subscriber>();
  let closed = false;

  return {
    async publish(topic: string, records: readonly BusRecord[]): Promise<void> {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      if (records.length === 0) return;
      const pipeline = cmd.pipeline();
      for (const record of records) {
        const key = streamKey(settings.prefix, topic, fnv1a(record.key) % settings.partitions);
        const trim = maxLen === undefined ? [] : ['MAXLEN', '~', maxLen];
        pipeline.call('XADD', key, ...trim, '*', 'k', record.key, 'v', record.value);
      }
      try {
        pipelineResults('publishing', await pipeline.exec());
      } catch (err) {
        throw unavailable('publishing', err);
      }
    },

    async lag(topic: string, group: string): Promise<number> {
      // XINFO GROUPS: `lag` is what the group has not read yet, `pending` what it read and has not acknowledged.
      const pipeline = cmd.pipeline();
      for (let p = 0; p < settings.partitions; p++) pipeline.call('XINFO', 'GROUPS', streamKey(settings.prefix, topic, p));
      const results = (await pipeline.exec()) ?? [];
      let total = 0;
      for (const [err, groups] of results) {
        if (err || !Array.isArray(groups)) continue; // no such stream yet
        for (const fields of groups as unknown[][]) {
          const info = new Map<string, unknown>();
          for (let i = 0; i + 1 < fields.length; i += 2) info.set(String(fields[i]), fields[i + 1]);
          if (info.get('name') !== group) continue;
          total += Number(info.get('lag') ?? 0) + Number(info.get('pending') ?? 0);
        }
      }
      return total;
    },

    async subscribe(topic: string, handler: BatchHandler, subscribeOptions: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      const subscriber = new Subscriber(cmd, settings, topic, handler, subscribeOptions, log);
      subscribers.add(subscriber);
      subscriber.onClosed = () => subscribers.delete(subscriber);
      try {
        await subscriber.start();
      } catch (err) {
        await subscriber.close();
        throw unavailable('subscribing', err);
      }
      return { close: () => subscriber.close() };
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([...subscribers].map((s) => s.close()));
      await closeRedis(cmd);
    },
  };
}

const streamKey = (prefix: string, topic: string, partition: number): string => `{${prefix}:${topic}:${partition}}`;

/** One partition held (or being handed back) by a subscription. */
interface Part {
  readonly partition: number;
  readonly key: string;
  readonly lease: string;
  /** idle: waits in the blocking read; busy: its worker runs; releasing: being handed back. */
  state: 'idle' | 'busy' | 'releasing';
  /** claim: take over others' pending entries; pending: re-read our own; live: read new entries. */
  mode: 'claim' | 'pending' | 'live';
  /** Hand it back once the batch in hand is done (rebalance). */
  wantRelease: boolean;
  /** The lease is someone else's now: stop without touching the partition. */
  lost: boolean;
  /** The handler held a batch past claimIdleMs: the lease is left to expire. */
  abandoned: boolean;
  /** When the handler got the batch it holds, if it holds one. */
  handlingSince: number | undefined;
  /**
   * Until when the lease is surely ours (local clock, counted from before the
   * last successful SET or renewal was sent). Past it the partition is not
   * consumed, so a member cut off from Redis stops before another takes over.
   */
  validUntil: number;
}

interface StreamEntry {
  id: string;
  fields: Buffer[] | null;
}

class Subscriber {
  onClosed?: () => void;

  private readonly group: string;
  private readonly consumer: string;
  /** This subscription's identity in leases and membership (unique even if a consumer name is reused). */
  private readonly token: string;
  private readonly maxBatch: number;
  private readonly keys: string[];
  private readonly leases: string[];
  private readonly membersKey: string;
  private readonly partitionOf = new Map<string, number>();
  private readonly log: Logger;
  private readonly reader: Redis;
  private readonly scripts: Scripts;

  private readonly parts = new Map<number, Part>();
  /** When each partition was first seen without an owner, in the current run of sightings. */
  private readonly freeSince = new Map<number, number>();
  private readonly workers = new Set<Promise<void>>();
  private readonly sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  private tickTimer: NodeJS.Timeout | undefined;
  private lastTrim = 0;
  private ticking: Promise<void> | undefined;
  private readDone: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Partitions named by the blocking read in progress. */
  private reading: Set<number> | undefined;
  private readCycle = 0;
  private readerId: number | undefined;
  private unblockCycle = -1;
  private unblockTimer: NodeJS.Timeout | undefined;
  private closing = false;
  /** Set once close has given up on the workers: nothing may touch Redis any more. */
  private dead = false;
  private closed: Promise<void> | undefined;

  constructor(
    private readonly cmd: Redis,
    private readonly settings: Settings,
    private readonly topic: string,
    private readonly handler: BatchHandler,
    options: SubscribeOptions,
    log: Logger,
  ) {
    this.group = options.group;
    this.consumer = options.consumer ?? `consumer-${randomUUID()}`;
    this.token = `${this.consumer}#${randomUUID().slice(0, 8)}`;
    this.maxBatch = Math.max(1, Math.trunc(options.maxBatch ?? DEFAULT_MAX_BATCH));
    this.keys = Array.from({ length: settings.partitions }, (_, p) => streamKey(settings.prefix, topic, p));
    this.keys.forEach((key, p) => {
      this.partitionOf.set(key, p);
    });
    this.leases = this.keys.map((key) => `${key}:owner:${this.group}`);
    this.membersKey = `{${settings.prefix}:${topic}}:members:${this.group}`;
    this.log = log.child({ topic, group: this.group, consumer: this.consumer });
    this.scripts = cmd as unknown as Scripts;
    this.reader = cmd.duplicate({ enableAutoPipelining: false });
    watchErrors(this.reader, this.log);
    this.reader.on('close', () => {
      this.readerId = undefined;
    });
  }

  async start(): Promise<void> {
    await this.ensureGroups();
    await this.tick();
    this.scheduleTick();
    this.readDone = this.readLoop();
  }

  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  // ── Ownership ──────────────────────────────────────────────────────────

  private scheduleTick(): void {
    if (this.closing) return;
    this.tickTimer = setTimeout(() => {
      this.tickTimer = undefined;
      this.ticking = this.tick()
        .catch((err) => this.log.warn('partition lease round failed', { err }))
        .finally(() => {
          this.ticking = undefined;
          this.scheduleTick();
        });
    }, this.settings.renewEveryMs);
  }

  /** Renews leases, refreshes membership, takes free partitions and hands back surplus ones. */
  private async tick(): Promise<void> {
    if (this.closing) return;
    const { partitions, leaseMs, claimIdleMs } = this.settings;
    const now = Date.now();
    for (const part of this.parts.values()) {
      if (!part.abandoned && part.handlingSince !== undefined && now - part.handlingSince > claimIdleMs) {
        part.abandoned = true;
        this.log.warn('handler holds a batch too long; leaving the partition to another member', { partition: part.partition });
      }
    }
    const renewing = [...this.parts.values()].filter((p) => !p.abandoned && !p.lost && p.state !== 'releasing');

    const pipeline = this.cmd.pipeline();
    const scripted = pipeline as unknown as Scripts;
    const sentAt = Date.now();
    void scripted.hermodMembers(this.membersKey, this.token, leaseMs, '0');
    for (const lease of this.leases) pipeline.get(lease);
    for (const part of renewing) void scripted.hermodLeaseRenew(part.lease, this.token, leaseMs);
    const results = pipelineResults('renewing partition leases', await pipeline.exec());
    const members = (results[0] as unknown[]).map(String);
    const owners = results.slice(1, 1 + partitions).map((o) => (o === null || o === undefined ? undefined : String(o)));
    renewing.forEach((part, i) => {
      if (Number(results[1 + partitions + i]) === 1) {
        part.validUntil = sentAt + leaseMs;
        return;
      }
      if (part.state === 'releasing' || this.parts.get(part.partition) !== part) return; // handed back meanwhile
      part.lost = true;
      this.log.warn('lost a partition lease', { partition: part.partition });
      if (part.state === 'idle') this.wakeReader();
    });
    if (this.closing) return;
    if (now - this.lastTrim >= this.settings.trimEveryMs) {
      this.lastTrim = now;
      await this.trimHeld();
    }

    // Who holds what, and what is free.
    const counts = new Map<string, number>();
    for (const owner of owners) if (owner !== undefined) counts.set(owner, (counts.get(owner) ?? 0) + 1);
    const free: number[] = [];
    for (let p = 0; p < partitions; p++) {
      if (owners[p] === undefined && !this.parts.has(p)) {
        free.push(p);
        if (!this.freeSince.has(p)) this.freeSince.set(p, now);
      } else {
        // (A lease of ours unknown here — a hand-back that failed — simply expires.)
        this.freeSince.delete(p);
      }
    }

    const n = Math.max(1, members.includes(this.token) ? members.length : members.length + 1);
    const quota = Math.ceil(partitions / n);
    const floor = Math.floor(partitions / n);
    const holding = [...this.parts.values()].filter((p) => !p.abandoned && !p.lost && !p.wantRelease && p.state !== 'releasing');
    const held = holding.length;

    // Take free partitions: up to our share, plus any left free for a whole lease (stuck or dead owner).
    const offset = fnv1a(this.token) % partitions;
    free.sort((a, b) => ((a - offset + partitions) % partitions) - ((b - offset + partitions) % partitions));
    let room = quota - held;
    const wanted = free.filter((p) => {
      if (room > 0) {
        room -= 1;
        return true;
      }
      return now - (this.freeSince.get(p) ?? now) >= leaseMs;
    });
    if (wanted.length > 0) await this.acquire(wanted);

    // Hand back surplus when another member has clearly less.
    const others = members.filter((m) => m !== this.token).map((m) => counts.get(m) ?? 0);
    if (others.length === 0) return;
    const fewest = Math.min(...others);
    let surplus = 0;
    if (held > quota && fewest < floor) surplus = held - quota;
    else if (held > floor && held - fewest >= 2) surplus = 1;
    if (surplus <= 0) return;
    const order = [...holding].sort((a, b) => Number(b.state === 'idle') - Number(a.state === 'idle'));
    for (const part of order.slice(0, surplus)) {
      part.wantRelease = true;
      if (part.state === 'idle') this.wakeReader();
    }
  }

  /** Trims the streams of the partitions we hold of what every group has acknowledged. */
  private async trimHeld(): Promise<void> {
    const held = [...this.parts.values()].filter((p) => !p.lost && !p.abandoned && p.state !== 'releasing');
    if (held.length === 0) return;
    const pipeline = this.cmd.pipeline();
    for (const part of held) void (pipeline as unknown as Scripts).hermodTrimAcknowledged(part.key, this.settings.keepAcknowledgedMs);
    try {
      pipelineResults('trimming acknowledged entries', await pipeline.exec());
    } catch (err) {
      // Nothing is lost by a missed trim; the next round tries again.
      this.log.warn('trimming acknowledged entries failed', { err });
    }
  }

  private async acquire(partitions: number[]): Promise<void> {
    const pipeline = this.cmd.pipeline();
    const sentAt = Date.now();
    for (const p of partitions) pipeline.set(this.leases[p]!, this.token, 'PX', this.settings.leaseMs, 'NX');
    const results = pipelineResults('taking partition leases', await pipeline.exec());
    partitions.forEach((p, i) => {
      if (results[i] !== 'OK') return;
      this.freeSince.delete(p);
      this.adopt(p, sentAt + this.settings.leaseMs);
    });
  }

  /** Starts consuming a partition whose lease we hold, beginning with the takeover steps. */
  private adopt(partition: number, validUntil: number): void {
    const part: Part = {
      partition,
      key: this.keys[partition]!,
      lease: this.leases[partition]!,
      state: 'busy',
      mode: 'claim',
      wantRelease: false,
      lost: false,
      abandoned: false,
      handlingSince: undefined,
      validUntil,
    };
    this.parts.set(partition, part);
    this.track(this.work(part));
  }

  /** Hands a partition back: our pending entries become claimable at once, then the lease goes. */
  private async release(part: Part): Promise<void> {
    part.state = 'releasing';
    try {
      await this.scripts.hermodLeaseRelease(part.key, part.lease, this.group, this.consumer, this.token, this.settings.claimIdleMs + HANDED_BACK_IDLE_MS);
    } catch (err) {
      this.log.warn('handing a partition back failed; its lease will expire', { partition: part.partition, err });
    }
    this.drop(part);
  }

  private drop(part: Part): void {
    if (this.parts.get(part.partition) === part) this.parts.delete(part.partition);
  }

  private async ensureGroups(): Promise<void> {
    const pipeline = this.cmd.pipeline();
    for (const key of this.keys) pipeline.call('XGROUP', 'CREATE', key, this.group, '0', 'MKSTREAM');
    const results = await pipeline.exec();
    if (!results) throw new HermodError('unavailable', 'creating consumer groups: the pipeline was discarded');
    for (const [err] of results) if (err && !err.message.startsWith('BUSYGROUP')) throw unavailable('creating consumer groups', err);
  }

  // ── Consuming one partition ────────────────────────────────────────────

  /** Runs one partition until it runs dry (then it waits in the blocking read), is handed back, lost, or the subscription closes. */
  private async work(part: Part, initial?: DeliveredRecord[]): Promise<void> {
    part.state = 'busy';
    let batch = initial;
    let errors = 0;
    for (;;) {
      if (this.dead) return;
      if (this.expired(part)) return this.drop(part);
      if (this.closing) return; // close hands back whatever is left
      // A batch already read while the lease was ours is handled before a hand-back.
      if (part.abandoned || (part.wantRelease && !batch)) return this.release(part);
      try {
        if (part.mode === 'claim') {
          if (await this.claimOthers(part)) part.mode = 'pending';
          else await this.pause(Math.max(10, Math.min(500, this.settings.claimIdleMs / 4)));
          continue;
        }
        batch ??= part.mode === 'pending' ? await this.readOwnPending(part) : await this.readNew(part);
        if (batch.length === 0) {
          batch = undefined;
          if (part.mode === 'pending') {
            part.mode = 'live';
            continue;
          }
          part.state = 'idle';
          this.wakeReader();
          return;
        }
        const handed = batch;
        batch = undefined;
        if (!(await this.handle(part, handed)) || this.dead) continue;
        // Acknowledge and fetch the next batch in one round trip; if the ack fails, the
        // partition re-reads its pending entries first, so order is kept.
        const prefetch = part.mode === 'live' && !this.closing && !part.wantRelease && !part.lost && !part.abandoned;
        const [, next] = await Promise.all([this.cmd.xack(part.key, this.group, ...handed.map((r) => r.offset)), prefetch ? this.readNew(part) : undefined]);
        batch = next;
        errors = 0;
      } catch (err) {
        batch = undefined;
        if (this.closing || this.dead) return;
        if (part.mode === 'live') part.mode = 'pending';
        if (err instanceof Error && err.message.startsWith('NOGROUP')) await this.ensureGroups().catch(() => undefined);
        this.log.warn('consuming a partition failed; retrying', { partition: part.partition, err });
        await this.pause(this.backoff(errors++));
      }
    }
  }

  /**
   * Claims the pending entries of other consumers idle at least claimIdleMs;
   * true once no other consumer holds pending entries of the partition.
   */
  private async claimOthers(part: Part): Promise<boolean> {
    let cursor = '0-0';
    do {
      const reply = (await this.cmd.call(
        'XAUTOCLAIM',
        part.key,
        this.group,
        this.consumer,
        String(this.settings.claimIdleMs),
        cursor,
        'COUNT',
        String(CLAIM_CHUNK),
        'JUSTID',
      )) as unknown[];
      cursor = String(reply[0]);
    } while (cursor !== '0-0' && !this.closing);
    const summary = (await this.cmd.call('XPENDING', part.key, this.group)) as unknown[];
    const holders = Array.isArray(summary[3]) ? (summary[3] as unknown[][]) : [];
    const othersHold = holders.some((h) => String(h[0]) !== this.consumer && Number(h[1]) > 0);
    if (othersHold) return false;
    await this.scripts.hermodPruneConsumers(part.key, this.group, this.consumer, this.settings.leaseMs).catch(() => 0);
    return true;
  }

  /** Our own pending entries of the partition, oldest first, with their delivery counts. */
  private async readOwnPending(part: Part): Promise<DeliveredRecord[]> {
    for (;;) {
      const pipeline = this.cmd.pipeline();
      pipeline.call('XPENDING', part.key, this.group, '-', '+', String(this.maxBatch), this.consumer);
      readGroup(pipeline)('GROUP', this.group, this.consumer, 'COUNT', String(this.maxBatch), 'STREAMS', part.key, '0');
      const [pending, reply] = pipelineResults('reading pending entries', await pipeline.exec());
      const deliveries = new Map<string, number>();
      for (const row of (pending as unknown[][] | null) ?? []) deliveries.set(String(row[0]), Number(row[3]));
      const entries = parseStreams(reply).flatMap((s) => s.entries);
      if (entries.length === 0) return [];
      // Entries trimmed from the stream while pending come back without fields: nothing to deliver.
      const gone = entries.filter((e) => e.fields === null).map((e) => e.id);
      if (gone.length > 0) await this.cmd.xack(part.key, this.group, ...gone);
      const records = entries.flatMap((e) => (e.fields ? [this.record(part, e.id, e.fields, deliveries.get(e.id) ?? 1)] : []));
      if (records.length > 0) return records;
    }
  }

  /** New entries of the partition, without blocking. */
  private async readNew(part: Part): Promise<DeliveredRecord[]> {
    const reply = await readGroup(this.cmd)('GROUP', this.group, this.consumer, 'COUNT', String(this.maxBatch), 'STREAMS', part.key, '>');
    return parseStreams(reply).flatMap((s) => s.entries.flatMap((e) => (e.fields ? [this.record(part, e.id, e.fields, 0)] : [])));
  }

  /** Hands a batch to the handler until it resolves (true) or the partition must stop (false). */
  private async handle(part: Part, records: DeliveredRecord[]): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const batch = attempt === 0 ? records : records.map((r) => ({ ...r, redeliveries: r.redeliveries + attempt }));
      part.handlingSince = Date.now();
      let ok = true;
      try {
        await Promise.resolve().then(() => this.handler(batch));
      } catch (err) {
        ok = false;
        this.log.debug('handler rejected a batch', { partition: part.partition, err });
      }
      part.handlingSince = undefined;
      if (ok) return true;
      const stop = (): boolean => this.closing || this.dead || part.wantRelease || part.lost || part.abandoned;
      if (stop()) return false;
      await this.pause(this.backoff(attempt));
      if (stop()) return false;
    }
  }

  private record(part: Part, id: string, fields: Buffer[], redeliveries: number): DeliveredRecord {
    let key = '';
    let value: Buffer = Buffer.alloc(0);
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const name = fields[i]!.toString();
      if (name === 'k') key = fields[i + 1]!.toString();
      else if (name === 'v') value = fields[i + 1]!;
    }
    return { key, value, topic: this.topic, partition: part.partition, offset: id, redeliveries };
  }

  // ── The blocking read over idle partitions ─────────────────────────────

  private async readLoop(): Promise<void> {
    let errors = 0;
    while (!this.closing) {
      for (const part of [...this.parts.values()]) {
        if (part.state !== 'idle') continue;
        if (this.expired(part)) this.drop(part);
        else if (part.wantRelease) this.track(this.work(part)); // it hands itself back
      }
      const idle = [...this.parts.values()].filter((p) => p.state === 'idle');
      if (idle.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }

      const keys = idle.map((p) => p.key);
      this.reading = new Set(idle.map((p) => p.partition));
      let reply: unknown;
      try {
        if (this.readerId === undefined) {
          // Sent ahead of the read on the same connection, so it is known while the read blocks.
          this.reader.call('CLIENT', 'ID').then(
            (id) => void (this.readerId = Number(id)),
            () => undefined,
          );
        }
        reply = await readGroup(this.reader)(
          'GROUP',
          this.group,
          this.consumer,
          'COUNT',
          String(this.maxBatch),
          'BLOCK',
          String(this.settings.blockMs),
          'STREAMS',
          ...keys,
          ...keys.map(() => '>'),
        );
        errors = 0;
      } catch (err) {
        if (this.closing) break;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) await this.ensureGroups().catch(() => undefined);
        this.log.warn('blocking read failed; retrying', { err });
        await this.pause(this.backoff(errors++));
        continue;
      } finally {
        this.reading = undefined;
        this.readCycle += 1;
        if (this.unblockTimer) clearTimeout(this.unblockTimer);
        this.unblockTimer = undefined;
      }

      for (const stream of parseStreams(reply)) {
        const partition = this.partitionOf.get(stream.key);
        const part = partition === undefined ? undefined : this.parts.get(partition);
        // Records for a partition that is no longer surely ours, or read while closing, stay
        // pending here: a hand-back marks them claimable, a lost lease's next owner claims them once idle.
        if (part?.state !== 'idle' || this.expired(part) || this.closing) continue;
        const records = stream.entries.flatMap((e) => (e.fields ? [this.record(part, e.id, e.fields, 0)] : []));
        if (records.length > 0) this.track(this.work(part, records));
      }
    }
  }

  /** Makes the read loop look at the partitions again: wakes it if waiting, cuts its blocking read short if reading. */
  private wakeReader(): void {
    if (this.wake) {
      const wake = this.wake;
      this.wake = undefined;
      wake();
    } else if (this.reading) {
      this.unblock();
    }
  }

  /** CLIENT UNBLOCK for the read in progress, retried briefly if the read has not reached Redis yet. */
  private unblock(): void {
    const cycle = this.readCycle;
    if (this.unblockCycle === cycle) return;
    this.unblockCycle = cycle;
    const attempt = (): void => {
      this.unblockTimer = undefined;
      if (this.readCycle !== cycle || this.dead) return;
      const id = this.readerId;
      const sent = id === undefined ? Promise.resolve(0) : this.cmd.call('CLIENT', 'UNBLOCK', String(id)).then(Number, () => 0);
      void sent.then((unblocked) => {
        if (unblocked === 1 || this.readCycle !== cycle || this.dead) return;
        this.unblockTimer = setTimeout(attempt, 5);
      });
    };
    attempt();
  }

  // ── Helpers ────────────────────────────────────────────────────────────

  /** The lease is someone else's, or may be by now. */
  private expired(part: Part): boolean {
    if (!part.lost && Date.now() >= part.validUntil) {
      part.lost = true;
      if (!part.abandoned) this.log.warn('partition lease not renewed in time; stopping it', { partition: part.partition });
    }
    return part.lost;
  }

  private track(worker: Promise<void>): void {
    const tracked = worker.catch((err) => this.log.error('partition worker failed', { err }));
    this.workers.add(tracked);
    void tracked.finally(() => this.workers.delete(tracked));
  }

  private backoff(failures: number): number {
    return Math.min(this.settings.maxRetryDelayMs, this.settings.retryDelayMs * 2 ** failures);
  }

  /** A sleep that close() cuts short. */
  private pause(ms: number): Promise<void> {
    if (this.closing) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const sleeper = {
        timer: setTimeout(() => {
          this.sleepers.delete(sleeper);
          resolve();
        }, ms),
        resolve,
      };
      this.sleepers.add(sleeper);
    });
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = undefined;
    for (const sleeper of this.sleepers) {
      clearTimeout(sleeper.timer);
      sleeper.resolve();
    }
    this.sleepers.clear();
    this.wakeReader();
    await this.readDone;
    await this.ticking;

    // Let the handlers finish (and acknowledge) the batches they hold, up to closeTimeoutMs.
    if (this.workers.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...this.workers]), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.settings.closeTimeoutMs)))]);
      clearTimeout(timer);
    }
    this.dead = true;
    if (this.unblockTimer) clearTimeout(this.unblockTimer);
    this.unblockTimer = undefined;

    // Hand back every partition (what was not acknowledged moves at once), and leave the group.
    try {
      const pipeline = this.cmd.pipeline();
      const scripted = pipeline as unknown as Scripts;
      const idle = this.settings.claimIdleMs + HANDED_BACK_IDLE_MS;
      for (const part of this.parts.values()) void scripted.hermodLeaseRelease(part.key, part.lease, this.group, this.consumer, this.token, idle);
      void scripted.hermodMembers(this.membersKey, this.token, this.settings.leaseMs, '1');
      await pipeline.exec();
    } catch (err) {
      this.log.warn('handing partitions back on close failed; their leases will expire', { err });
    }
    this.parts.clear();
    await closeRedis(this.reader);
    this.onClosed?.();
  }
}

/**
 * XREADGROUP with binary replies. (ioredis' callBuffer loses the command name
 * under auto-pipelining, so the generated command is used, untyped: its
 * overloads cannot take the argument list built here.)
 */
function readGroup(client: Redis | ChainableCommander): (...args: (string | number)[]) => Promise<unknown> {
  const typed = client as unknown as { xreadgroupBuffer(...args: (string | number)[]): Promise<unknown> };
  return (...args) => typed.xreadgroupBuffer(...args);
}

/**
 * Reads an XREADGROUP reply: RESP2 (`[[key, entries], …]`), RESP3 with legacy
 * mapping (`[key, entries, key, entries, …]`), or a map.
 */
function parseStreams(reply: unknown): { key: string; entries: StreamEntry[] }[] {
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
