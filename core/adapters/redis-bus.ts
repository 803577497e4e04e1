import type { BatchHandler, Bus, BusRecord, SubscribeOptions, Subscription } from '../ports/bus';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { streamKey } from './redis-bus-keys';
import { createRedisAcknowledged } from './redis-bus-acknowledged';
import { createRedisPublisher } from './redis-bus-publish';
import { groupBacklog, lastEntryId } from './redis-bus-replies';
import { defineRedisBusScripts } from './redis-bus-scripts';
import { type RedisBusOptions, resolveRedisBusSettings } from './redis-bus-settings';
import { RedisBusSubscriber } from './redis-bus-subscriber';
import { closeRedis, openRedis, unavailable } from './redis-connection';

export type { RedisBusOptions } from './redis-bus-settings';

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
 * publish() is one pipeline of XADDs. `tracked` publishing also reads the
 * bus' epoch (`<prefix>:bus-epoch`, a random value set on first use) and
 * returns each record's stream id, and says how far a group has acknowledged
 * each stream (redis-bus-acknowledged.ts). Consumer groups are created at `0`
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
 *
 * Where each stage lives: settings and keys (redis-bus-settings.ts,
 * redis-bus-keys.ts); publishing (redis-bus-publish.ts); one subscription
 * (redis-bus-subscriber.ts) with its leases and rebalancing
 * (redis-bus-leases.ts, the arithmetic in redis-bus-rebalance.ts), its reads
 * and claims (redis-bus-reads.ts), its partition workers
 * (redis-bus-partition-worker.ts) and its blocking read
 * (redis-bus-read-loop.ts); the Lua scripts (redis-bus-scripts.ts); ioredis
 * replies as typed values (redis-bus-replies.ts).
 */
export function createRedisBus(options: RedisBusOptions): Bus {
  const settings = resolveRedisBusSettings(options);
  const log = options.log?.child({ component: 'redis-bus' }) ?? createLogger({ component: 'redis-bus' });
  const cmd = openRedis(options.redis, { enableAutoPipelining: true }, log);
  defineRedisBusScripts(cmd);
  const publish = createRedisPublisher(cmd, settings);
  const acknowledged = createRedisAcknowledged(cmd, settings);

  const subscribers = new Set<RedisBusSubscriber>();
  let closed = false;

  return {
    async publish(topic: string, records: readonly BusRecord[]): Promise<void> {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      await publish(topic, records);
    },

    // A Redis without persistence that comes back empty loses what its streams held: publishers may keep what
    // they published until a group has it (the callback producer does).
    tracked: {
      async publish(topic, records) {
        if (closed) throw new HermodError('unavailable', 'bus is closed');
        return publish(topic, records, true);
      },
      acknowledged: (topic, group) => acknowledged(topic, group),
    },

    async lag(topic: string, group: string): Promise<number> {
      const pipeline = cmd.pipeline();
      for (let p = 0; p < settings.partitions; p++) {
        const key = streamKey(settings.prefix, topic, p);
        pipeline.call('XINFO', 'GROUPS', key);
        pipeline.call('XLEN', key);
        // Only the id is read; the entry's fields come along (one record).
        pipeline.call('XREVRANGE', key, '+', '-', 'COUNT', '1');
      }
      const results = (await pipeline.exec()) ?? [];
      let total = 0;
      for (let i = 0; i + 2 < results.length; i += 3) {
        const [err, groups] = results[i]!;
        if (err) continue; // no such stream yet
        // A group that never joined reads the stream from its start (XGROUP CREATE … 0): all of it waits for it.
        const length = Number(results[i + 1]![1] ?? 0);
        total += groupBacklog(groups, group, length, lastEntryId(results[i + 2]![1]) ?? '0-0') ?? length;
      }
      return total;
    },

    async subscribe(topic: string, handler: BatchHandler, subscribeOptions: SubscribeOptions): Promise<Subscription> {
      if (closed) throw new HermodError('unavailable', 'bus is closed');
      const subscriber = new RedisBusSubscriber(cmd, settings, topic, handler, subscribeOptions, log);
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
