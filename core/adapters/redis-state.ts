import type { Redis } from 'ioredis';
import { isMessageStatus, MESSAGE_STATUSES, stageOf, type MessageStatus } from '../domain/message-status';
import type { HotState, IdempotencyRecord, LastMessage, RateGrant, ReplyContext, StatusAdvance, StatusEntry } from '../ports/state';
import { HermodError } from '../../lib/errors';
import { createLogger } from '../../lib/log';
import { closeRedis, openRedis, pipelineResults, unavailable, type RedisConnectionOptions } from './redis-connection';

export interface RedisStateOptions {
  redis: RedisConnectionOptions;
  /** First part of every key (default `hermod`). */
  prefix?: string;
  /** Lifetime of a status or carrier id after its last write (default 7 days). */
  ttlSeconds?: number;
}

const DEFAULT_TTL_SECONDS = 7 * 24 * 60 * 60;

/**
 * The stage table of `message-status.ts`, written into the script so Redis
 * decides forward moves atomically. Generated from the same table the rest of
 * the code uses, so the two cannot drift apart.
 */
const LUA_STAGES = `{${MESSAGE_STATUSES.map((s) => `['${s}']=${stageOf(s)}`).join(',')}}`;

/**
 * KEYS[1] status key; ARGV: status, at, ttl seconds. Returns 1 when applied.
 * Mirrors canAdvance: nothing moves on from `read`; `read` follows `received`
 * or any non-final stage; otherwise only a strictly later stage applies.
 */
const ADVANCE_LUA = `
local STAGE = ${LUA_STAGES}
local nextStatus = ARGV[1]
local nextStage = STAGE[nextStatus]
if nextStage == nil then return redis.error_reply('ERR unknown message status ' .. tostring(nextStatus)) end
local current = redis.call('GET', KEYS[1])
if current then
  local curStage, curStatus = string.match(current, '^(%d+)|([^|]*)|')
  curStage = tonumber(curStage)
  if curStage ~= nil then
    if curStatus == 'read' then return 0 end
    if nextStatus == 'read' then
      if not (curStatus == 'received' or curStage < 4) then return 0 end
    elseif nextStage <= curStage then
      return 0
    end
  end
end
redis.call('SET', KEYS[1], nextStage .. '|' .. nextStatus .. '|' .. ARGV[2], 'EX', ARGV[3])
return 1
`;

/**
 * KEYS[1] rate key (a hash: w = window second, u = used); ARGV: limit, wanted.
 * The window is Redis's own clock, so every process counts the same second.
 * Returns { granted, milliseconds left in the window }.
 */
const TAKE_RATE_LUA = `
local t = redis.call('TIME')
local window = tonumber(t[1])
local limit = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local current = redis.call('HMGET', KEYS[1], 'w', 'u')
local used = 0
if tonumber(current[1]) == window then used = tonumber(current[2]) or 0 end
local granted = math.max(0, math.min(wanted, limit - used))
redis.call('HSET', KEYS[1], 'w', window, 'u', used + granted)
redis.call('EXPIRE', KEYS[1], 2)
return { granted, 1000 - math.floor(tonumber(t[2]) / 1000) }
`;

interface ScriptedClient {
  hermodAdvanceStatus(key: string, status: string, at: string, ttl: number): Promise<number>;
  hermodTakeRate(key: string, limit: number, wanted: number): Promise<[number, number]>;
}

/**
 * Hot state in Redis. One string key per message, `<prefix>:msg:{<id>}:status`
 * holding `stage|status|at`, and one per carrier id,
 * `<prefix>:carrier:{<carrierId>}` holding our message id; every key lives
 * `ttlSeconds` after its last write. The braces make each key its own hash
 * slot, so every command touches one slot and the layout suits a cluster.
 *
 * A batch of advances is one pipeline (one round trip) of one script call per
 * advance; Redis runs them in order, each atomically, so concurrent writers in
 * any number of processes never move a message backwards and exactly one of
 * them applies a given step. The connection auto-pipelines, so concurrent
 * single reads share round trips too.
 */
export function createRedisState(options: RedisStateOptions): HotState {
  const prefix = options.prefix ?? 'hermod';
  const ttlSeconds = Math.max(1, Math.trunc(options.ttlSeconds ?? DEFAULT_TTL_SECONDS));
  const log = createLogger({ component: 'redis-state' });
  const client: Redis = openRedis(options.redis, { enableAutoPipelining: true }, log);
  client.defineCommand('hermodAdvanceStatus', { numberOfKeys: 1, lua: ADVANCE_LUA });
  client.defineCommand('hermodTakeRate', { numberOfKeys: 1, lua: TAKE_RATE_LUA });
  let closed = false;

  const statusKey = (id: string): string => `${prefix}:msg:{${id}}:status`;
  const carrierKey = (carrierId: string): string => `${prefix}:carrier:{${carrierId}}`;
  const submittedKey = (messageId: string): string => `${prefix}:submitted:{${messageId}}`;
  const cancelledKey = (messageId: string): string => `${prefix}:cancelled:{${messageId}}`;
  const idempotencyKey = (key: string): string => `${prefix}:idem:{${key}}`;
  const lastMessageKey = (handset: string): string => `${prefix}:last:{${handset}}`;
  const optOutKey = (applicationId: string): string => `${prefix}:optout:{${applicationId}}`;
  const lastFromKey = (address: string, handset: string): string => `${prefix}:lastfrom:{${address}|${handset}}`;
  // A sorted set per address: application → when it last sent from there.
  const sendersKey = (address: string): string => `${prefix}:senders:{${address}}`;
  const rateKey = (key: string): string => `${prefix}:rate:{${key}}`;
  const parseLast = (value: string | null): LastMessage | undefined => {
    if (value === null) return undefined;
    const bar = value.indexOf('|');
    return { applicationId: value.slice(0, bar), messageId: value.slice(bar + 1) };
  };
  const open = (): void => {
    if (closed) throw new HermodError('unavailable', 'hot state is closed');
  };

  return {
    async advanceStatuses(advances: readonly StatusAdvance[]): Promise<boolean[]> {
      open();
      if (advances.length === 0) return [];
      const pipeline = client.pipeline();
      const scripted = pipeline as unknown as ScriptedClient;
      for (const a of advances) void scripted.hermodAdvanceStatus(statusKey(a.id), a.status, String(a.at), ttlSeconds);
      let results: [Error | null, unknown][] | null;
      try {
        results = await pipeline.exec();
      } catch (err) {
        throw unavailable('advancing statuses', err);
      }
      return pipelineResults('advancing statuses', results).map((r) => Number(r) === 1);
    },

    async getStatus(id: string): Promise<StatusEntry | undefined> {
      open();
      let value: string | null;
      try {
        value = await client.get(statusKey(id));
      } catch (err) {
        throw unavailable('reading a status', err);
      }
      return value === null ? undefined : parseStatus(value);
    },

    async putCarrierIds(pairs): Promise<void> {
      open();
      if (pairs.length === 0) return;
      const pipeline = client.pipeline();
      for (const p of pairs) {
        pipeline.set(carrierKey(p.carrierId), p.messageId, 'EX', ttlSeconds);
        pipeline.set(submittedKey(p.messageId), '1', 'EX', ttlSeconds);
      }
      try {
        pipelineResults('storing carrier ids', await pipeline.exec());
      } catch (err) {
        throw unavailable('storing carrier ids', err);
      }
    },

    async rememberLastMessages(entries): Promise<void> {
      open();
      if (entries.length === 0) return;
      const pipeline = client.pipeline();
      const now = Date.now();
      // A batch (a campaign's partition) mostly comes from one address: its senders are written once.
      const senders = new Map<string, Set<string>>();
      for (const e of entries) {
        const value = `${e.applicationId}|${e.messageId}`;
        pipeline.set(lastMessageKey(e.handset), value, 'EX', ttlSeconds);
        if (!e.source) continue;
        pipeline.set(lastFromKey(e.source, e.handset), value, 'EX', ttlSeconds);
        const apps = senders.get(e.source) ?? new Set<string>();
        apps.add(e.applicationId);
        senders.set(e.source, apps);
      }
      for (const [source, apps] of senders) {
        pipeline.zadd(sendersKey(source), ...[...apps].flatMap((app) => [now, app]));
        pipeline.zremrangebyscore(sendersKey(source), '-inf', now - ttlSeconds * 1000);
        pipeline.expire(sendersKey(source), ttlSeconds);
      }
      try {
        pipelineResults('remembering last messages', await pipeline.exec());
      } catch (err) {
        throw unavailable('remembering last messages', err);
      }
    },

    async getLastMessage(handset: string) {
      open();
      try {
        return parseLast(await client.get(lastMessageKey(handset)));
      } catch (err) {
        throw unavailable('reading the last message to a handset', err);
      }
    },

    async getReplyContext(handset: string, address: string): Promise<ReplyContext> {
      open();
      const pipeline = client.pipeline();
      pipeline.get(lastMessageKey(handset));
      if (address) {
        pipeline.get(lastFromKey(address, handset));
        pipeline.zrangebyscore(sendersKey(address), Date.now() - ttlSeconds * 1000, '+inf');
      }
      try {
        const [last, lastFrom, senders] = pipelineResults('reading what a reply answers', await pipeline.exec());
        return {
          lastToHandset: parseLast(last as string | null),
          lastFromAddress: address ? parseLast(lastFrom as string | null) : undefined,
          sendersOfAddress: address ? (senders as string[]) : [],
        };
      } catch (err) {
        throw unavailable('reading what a reply answers', err);
      }
    },

    async takeRateTokens(key: string, limitPerSecond: number, wanted: number): Promise<RateGrant> {
      open();
      try {
        const [granted, endsIn] = await (client as unknown as ScriptedClient).hermodTakeRate(rateKey(key), Math.floor(limitPerSecond), Math.max(0, Math.floor(wanted)));
        return { granted: Number(granted), windowEndsInMs: Number(endsIn) };
      } catch (err) {
        throw unavailable('taking from a rate limit', err);
      }
    },

    async setOptOuts(entries): Promise<void> {
      open();
      if (entries.length === 0) return;
      const pipeline = client.pipeline();
      for (const e of entries) {
        if (e.optedOut) pipeline.sadd(optOutKey(e.applicationId), e.handset);
        else pipeline.srem(optOutKey(e.applicationId), e.handset);
      }
      try {
        pipelineResults('storing opt-outs', await pipeline.exec());
      } catch (err) {
        throw unavailable('storing opt-outs', err);
      }
    },

    async areOptedOut(pairs): Promise<boolean[]> {
      open();
      if (pairs.length === 0) return [];
      const pipeline = client.pipeline();
      for (const p of pairs) pipeline.sismember(optOutKey(p.applicationId), p.handset);
      try {
        return pipelineResults('reading opt-outs', await pipeline.exec()).map((r) => Number(r) === 1);
      } catch (err) {
        throw unavailable('reading opt-outs', err);
      }
    },

    async claimIdempotencyKey(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyRecord | undefined> {
      open();
      try {
        const claimed = await client.set(idempotencyKey(key), JSON.stringify({ fingerprint }), 'PX', ttlMs, 'NX');
        if (claimed === 'OK') return undefined;
        const value = await client.get(idempotencyKey(key));
        // Expired between the two calls: the claim is ours after all.
        if (value === null) return (await client.set(idempotencyKey(key), JSON.stringify({ fingerprint }), 'PX', ttlMs, 'NX')) === 'OK' ? undefined : { fingerprint: '' };
        return JSON.parse(value) as IdempotencyRecord;
      } catch (err) {
        throw unavailable('claiming an idempotency key', err);
      }
    },

    async completeIdempotencyKey(key: string, record: Required<IdempotencyRecord>, ttlMs: number): Promise<void> {
      open();
      try {
        await client.set(idempotencyKey(key), JSON.stringify(record), 'PX', ttlMs);
      } catch (err) {
        throw unavailable('storing an idempotent response', err);
      }
    },

    async releaseIdempotencyKey(key: string): Promise<void> {
      open();
      try {
        await client.del(idempotencyKey(key));
      } catch (err) {
        throw unavailable('releasing an idempotency key', err);
      }
    },

    async wereSubmitted(messageIds: readonly string[]): Promise<boolean[]> {
      open();
      if (messageIds.length === 0) return [];
      // One GET per key (pipelined), not MGET: the keys live in different cluster slots.
      const pipeline = client.pipeline();
      for (const id of messageIds) pipeline.exists(submittedKey(id));
      try {
        return pipelineResults('reading submit markers', await pipeline.exec()).map((n) => n === 1);
      } catch (err) {
        throw unavailable('reading submit markers', err);
      }
    },

    async cancelSends(messageIds: readonly string[]): Promise<void> {
      open();
      if (messageIds.length === 0) return;
      const pipeline = client.pipeline();
      for (const id of messageIds) pipeline.set(cancelledKey(id), '1', 'EX', ttlSeconds);
      try {
        pipelineResults('storing cancel markers', await pipeline.exec());
      } catch (err) {
        throw unavailable('storing cancel markers', err);
      }
    },

    async wereCancelled(messageIds: readonly string[]): Promise<boolean[]> {
      open();
      if (messageIds.length === 0) return [];
      const pipeline = client.pipeline();
      for (const id of messageIds) pipeline.exists(cancelledKey(id));
      try {
        return pipelineResults('reading cancel markers', await pipeline.exec()).map((n) => n === 1);
      } catch (err) {
        throw unavailable('reading cancel markers', err);
      }
    },

    async getMessageIdByCarrierId(carrierId: string): Promise<string | undefined> {
      open();
      try {
        return (await client.get(carrierKey(carrierId))) ?? undefined;
      } catch (err) {
        throw unavailable('reading a carrier id', err);
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeRedis(client);
    },
  };
}

/** `stage|status|at` → entry; undefined for a value this code did not write. */
function parseStatus(value: string): StatusEntry | undefined {
  const first = value.indexOf('|');
  const second = value.indexOf('|', first + 1);
  if (first < 0 || second < 0) return undefined;
  const status = value.slice(first + 1, second);
  const at = Number(value.slice(second + 1));
  if (!isMessageStatus(status) || !Number.isFinite(at)) return undefined;
  return { status: status as MessageStatus, at };
}
