import { handsetKey } from '../domain/handset-key';
import { createRedisCarrierSnapshots } from './redis-carrier-snapshots';
import { failsAfterReceived, isFinal, isMessageStatus, MESSAGE_STATUSES, stageOf, THROUGH_QUEUE, type MessageStatus } from '../domain/message-status';
import type { AdvanceOutcome, HotState, LastMessage, RateGrant, ReplyContext, StatusAdvance, StatusEntry } from '../ports/state';
import { ADVANCE_REFUSED } from '../ports/state';
import { Cluster } from 'ioredis';
import { HermodError } from '../../lib/errors';
import { createLogger, type Logger } from '../../lib/log';
import { warnUnlessNoEviction } from './redis-eviction-check';
import { createRedisScreening } from './redis-screening-state';
import { createRedisCampaignControl } from './redis-campaign-control';
import { createRedisIdempotency } from './redis-idempotency';
import { createRedisLossMarkers } from './redis-loss-markers';
import { createRedisLeases } from './redis-leases';
import {
  closeRedis,
  isCommandTimeout,
  openRedisClient,
  sendAll,
  stallWarning,
  unavailable,
  waitForReplicas,
  type RedisClient,
  type RedisTarget,
} from './redis-connection';
import { hasHashedMark } from '../../lib/uuid';

export interface RedisStateOptions {
  /** A single Redis, or `{ cluster }` for a Redis Cluster. */
  redis: RedisTarget;
  /** First part of every key (default `hermod`). */
  prefix?: string;
  /** Lifetime of a status or carrier id after its last write (default 7 days). */
  ttlSeconds?: number;
  /** Lifetime of a message's keys once its status is final (default 1 minute). */
  finalTtlSeconds?: number;
  /**
   * The same for a message sent with an Idempotency-Key (its id carries
   * hashedUuid's mark; default a day, HERMOD_IDEMPOTENCY_TTL): a retry whose
   * first try's answer was lost finds it here (keyed-sends.ts).
   */
  keyedFinalTtlSeconds?: number;
  /**
   * Replicas that must hold each write before it resolves (Redis WAIT; on a
   * cluster, at most as many as the key's shard lists). Default 0: the
   * master's word. A master killed right after answering may otherwise take
   * the write with it when its replica takes over.
   */
  waitReplicas?: number;
  /** How long a write waits for them before failing as unavailable (default 1000 ms). */
  waitTimeoutMs?: number;
  /**
   * How long a command waits for its answer before failing as unavailable
   * (default 5 s, HERMOD_REDIS_COMMAND_TIMEOUT; always longer than
   * waitTimeoutMs): a Redis that stalls (paused, swapping, a long fork) is
   * told as such, where its connection stays open and nothing else fails.
   */
  commandTimeoutMs?: number;
  log?: Logger;
}

const DEFAULT_TTL_SECONDS = 7 * 24 * 60 * 60;
const DEFAULT_FINAL_TTL_SECONDS = 60;
const DEFAULT_KEYED_FINAL_TTL_SECONDS = 24 * 60 * 60;
const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

/**
 * The stage table of `message-status.ts`, written into the script so Redis
 * decides forward moves atomically. Generated from the same table the rest of
 * the code uses, so the two cannot drift apart.
 */
const LUA_STAGES = `{${MESSAGE_STATUSES.map((s) => `['${s}']=${stageOf(s)}`).join(',')}}`;

/**
 * KEYS[1] status key, KEYS[2..] the message's other keys (same hash slot);
 * ARGV: status, at, ttl seconds, ttl seconds once final, '1' when it applies
 * only once the message reached `submitted` (a carrier's report on its submit;
 * refused for a message with no status here),
 * '1' when `failed` may follow `received` on the message's channel (failsAfterReceived).
 * Returns 0 when refused, 1 when applied, 2 when applied to a message at
 * `accepted` with a status reached only through its channel's queue (its
 * `queued` was never taken: ADVANCE_SKIPPED_QUEUED), 3 when applied to a
 * message at `queued` (ADVANCE_AFTER_QUEUED).
 * A final status keeps the message in hot state only briefly (late duplicate
 * reports are still refused meanwhile); reads then come from history.
 * Mirrors canAdvance: nothing moves on from `read`; `read` follows `received`
 * or any non-final stage; `failed` follows `received` where ARGV[6] says so
 * (an e-mail's bounce);
 * otherwise only a strictly later stage applies.
 */
const ADVANCE_LUA = `
local STAGE = ${LUA_STAGES}
local THROUGH_QUEUE = {${THROUGH_QUEUE.map((st) => `['${st}']=true`).join(',')}}
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
    elseif nextStatus == 'failed' and curStatus == 'received' and ARGV[6] == '1' then
      -- an e-mail's bounce after its relay took it applies
    elseif nextStage <= curStage then
      return 0
    end
    if ARGV[5] == '1' and curStage < ${stageOf('submitted')} then return 0 end
  end
elseif ARGV[5] == '1' then
  -- a carrier's report on a message not known here: its status is read back from history first
  return 0
end
local ttl = ARGV[3]
if nextStage >= ${stageOf('received')} then
  ttl = ARGV[4]
  for i = 2, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end
end
redis.call('SET', KEYS[1], nextStage .. '|' .. nextStatus .. '|' .. ARGV[2], 'EX', ttl)
if current and string.match(current, '^%d+|accepted|') and THROUGH_QUEUE[nextStatus] then return 2 end
if current and string.match(current, '^%d+|queued|') then return 3 end
return 1
`;

/** KEYS[1] a message's send claim; ARGV: the token, the time to live in ms. Returns 1 when the claim is the token's. */
const CLAIM_SEND_LUA = `
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS[1] a message's send claim; ARGV: the token. Deletes the claim where the token holds it. */
const RELEASE_SEND_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/**
 * KEYS[1] the message's submit marker (its value the number of parts it was
 * sent in), KEYS[2] the set of its parts' carrier ids reported delivered;
 * ARGV: the carrier id, the time to live. Returns 1 once every part was
 * delivered (at once for a message sent whole, or one without a marker).
 */
const DELIVERED_WHOLE_LUA = `
local count = tonumber(redis.call('GET', KEYS[1]) or '1') or 1
if count <= 1 then return 1 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
if redis.call('SCARD', KEYS[2]) >= count then return 1 end
return 0
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
  hermodAdvanceStatus(
    statusKey: string,
    submittedKey: string,
    cancelledKey: string,
    partsKey: string,
    status: string,
    at: string,
    ttl: number,
    finalTtl: number,
    onceSubmitted: '0' | '1',
    failsAfterReceived: '0' | '1',
  ): Promise<number>;
  hermodTakeRate(key: string, limit: number, wanted: number): Promise<[number, number]>;
  hermodDeliveredWhole(submittedKey: string, partsKey: string, carrierId: string, ttlSeconds: number): Promise<number>;
  hermodClaimSend(claimKey: string, token: string, ttlMs: number): Promise<number>;
  hermodReleaseSend(claimKey: string, token: string): Promise<number>;
}

/**
 * Hot state in Redis. One string key per message, `<prefix>:msg:{<id>}:status`
 * holding `stage|status|at`, and one per carrier id,
 * `<prefix>:carrier:{<carrierId>}` holding our message id; every key lives
 * `ttlSeconds` after its last write. The braces make each key its own hash
 * slot. Every command and script touches exactly one key, so nothing here
 * spans two slots and the same code runs on a single Redis and on a cluster.
 *
 * A batch is one command per entry, sent together: the client auto-pipelines
 * them into one round trip per node (on a cluster, one pipeline per master).
 * Redis runs each script atomically and a key's commands in the order sent,
 * so concurrent writers in any number of processes never move a message
 * backwards and exactly one of them applies a given step. With
 * `waitReplicas`, a write resolves only once replicas hold it.
 */
export function createRedisState(options: RedisStateOptions): HotState {
  const prefix = options.prefix ?? 'hermod';
  const ttlSeconds = Math.max(1, Math.trunc(options.ttlSeconds ?? DEFAULT_TTL_SECONDS));
  const finalTtlSeconds = Math.max(1, Math.min(ttlSeconds, Math.trunc(options.finalTtlSeconds ?? DEFAULT_FINAL_TTL_SECONDS)));
  const keyedFinalTtlSeconds = Math.max(finalTtlSeconds, Math.min(ttlSeconds, Math.trunc(options.keyedFinalTtlSeconds ?? DEFAULT_KEYED_FINAL_TTL_SECONDS)));
  const log = options.log ?? createLogger({ component: 'redis-state' });
  const waitTimeoutMs = options.waitTimeoutMs ?? 1000;
  const commandTimeoutMs = Math.max(options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, waitTimeoutMs + 1000);
  const client: RedisClient = openRedisClient(options.redis, { enableAutoPipelining: true, commandTimeout: commandTimeoutMs }, log);
  const stalled = stallWarning(log, commandTimeoutMs);
  // A cluster's masters are known once it has connected.
  client.once('ready', () => void warnUnlessNoEviction(client, log));
  client.defineCommand('hermodAdvanceStatus', { numberOfKeys: 4, lua: ADVANCE_LUA });
  client.defineCommand('hermodTakeRate', { numberOfKeys: 1, lua: TAKE_RATE_LUA });
  client.defineCommand('hermodDeliveredWhole', { numberOfKeys: 2, lua: DELIVERED_WHOLE_LUA });
  client.defineCommand('hermodClaimSend', { numberOfKeys: 1, lua: CLAIM_SEND_LUA });
  client.defineCommand('hermodReleaseSend', { numberOfKeys: 1, lua: RELEASE_SEND_LUA });
  const scripted = client as unknown as ScriptedClient;
  const waitReplicas = options.waitReplicas ?? 0;
  let closed = false;

  const statusKey = (id: string): string => `${prefix}:msg:{${id}}:status`;
  const carrierKey = (carrierId: string): string => `${prefix}:carrier:{${carrierId}}`;
  const submittedKey = (messageId: string): string => `${prefix}:submitted:{${messageId}}`;
  const cancelledKey = (messageId: string): string => `${prefix}:cancelled:{${messageId}}`;
  // A message sent in parts: the carrier ids of those delivered (the same slot as its submit marker).
  const partsKey = (messageId: string): string => `${prefix}:parts:{${messageId}}`;
  const sendClaimKey = (messageId: string): string => `${prefix}:sending:{${messageId}}`;
  const lastMessageKey = (handset: string): string => `${prefix}:last:{${handsetKey(handset)}}`;
  const lastFromKey = (address: string, handset: string): string => `${prefix}:lastfrom:{${address}|${handsetKey(handset)}}`;
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
  /**
   * Whether commands can go out now. Once the client has been ready, a lost connection refuses them at once: queued
   * until Redis answered or their timeout passed, each waited for the auto-pipeline ahead of it to time out, then for
   * its own (an SRE trial: every send waited 10 s for its 503 while Redis was down). Before the first connection they
   * wait as before: a process starting beside its Redis waits for it.
   */
  let everReady = false;
  client.on('ready', () => {
    everReady = true;
  });
  const lost = (): boolean => everReady && client.status !== 'ready';
  /**
   * A single Redis that let a command wait out its timeout with its connection open (paused, swapping, a long
   * script): commands are refused at once until a PING sent behind them is answered, rather than each queueing
   * behind the one before it (a re-trial: the first sends waited 10 s for their 503, the next 5 s each). On a Cluster
   * one master's stall must not refuse the others': there each command waits its own timeout.
   */
  let pinging: Promise<unknown> | undefined;
  const probe = (): void => {
    if (pinging || client instanceof Cluster) return;
    const ping = (): Promise<unknown> =>
      client.ping().catch(async (err: unknown) => {
        if (closed) return;
        await new Promise((r) => setTimeout(r, isCommandTimeout(err) ? 0 : 250));
        return ping();
      });
    pinging = ping().finally(() => {
      pinging = undefined;
    });
  };
  /** Runs one command per entry together (auto-pipelined), failing as a whole with the first error. */
  const each = async <T>(what: string, commands: (() => Promise<T>)[]): Promise<T[]> => {
    if (lost()) throw new HermodError('unavailable', `${what}: Redis is not connected (${client.status})`);
    if (pinging) throw new HermodError('unavailable', `${what}: Redis has not answered for over ${commandTimeoutMs} ms`);
    try {
      return await sendAll(client, commands);
    } catch (err) {
      if (!isCommandTimeout(err)) throw unavailable(what, err);
      stalled();
      probe();
      throw new HermodError('unavailable', `${what}: Redis did not answer within ${commandTimeoutMs} ms`, { cause: err });
    }
  };
  /** Writes of `keys`, then (when asked) the replicas' confirmation: only then is a write acknowledged. */
  const write = async <T>(what: string, keys: string[], commands: (() => Promise<T>)[]): Promise<T[]> => {
    const results = await each(what, commands);
    try {
      await waitForReplicas(client, keys, waitReplicas, waitTimeoutMs);
    } catch (err) {
      // Applied on the master, perhaps, but not promised: the caller retries.
      throw new HermodError('unavailable', `${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return results;
  };

  /**
   * Each message's advance not yet answered, settled or not: a batch is answered only after the earlier advances of
   * its messages, so a message's changes are answered in the order Redis applied them. Its script runs in call order
   * on the message's master, but a batch spanning several masters waits for each one's replicas (WAIT), and a later
   * batch on one master alone would otherwise be answered first: the status recorder, which tells a message's changes
   * in the order hot state answers them, told a `sent` before the `queued` it followed (operator trial, Redis
   * Cluster). Other messages' batches are not held up by a slow master's.
   */
  const unanswered = new Map<string, Promise<void>>();
  function advanceNotingSkips(advances: readonly StatusAdvance[]): Promise<AdvanceOutcome[]> {
    const applying = applyAdvances(advances);
    // Observed at once: a failure while an earlier batch still waits is the caller's, never an unhandled rejection.
    applying.catch(() => undefined);
    const earlier = new Set<Promise<void>>();
    for (const a of advances) {
      const e = unanswered.get(a.id);
      if (e) earlier.add(e);
    }
    const answered = earlier.size === 0 ? applying : Promise.all(earlier).then(() => applying);
    const settled = answered.then(
      () => undefined,
      () => undefined,
    );
    for (const a of advances) unanswered.set(a.id, settled);
    void settled.then(() => {
      for (const a of advances) if (unanswered.get(a.id) === settled) unanswered.delete(a.id);
    });
    return answered;
  }

  async function applyAdvances(advances: readonly StatusAdvance[]): Promise<AdvanceOutcome[]> {
    open();
    if (advances.length === 0) return [];
    const keys = advances.map((a) => statusKey(a.id));
    const applied = await write(
      'advancing statuses',
      keys,
      advances.map(
        (a, i) => () =>
          scripted.hermodAdvanceStatus(
            keys[i]!,
            submittedKey(a.id),
            cancelledKey(a.id),
            partsKey(a.id),
            a.status,
            String(a.at),
            ttlSeconds,
            hasHashedMark(a.id) ? keyedFinalTtlSeconds : finalTtlSeconds,
            a.onceSubmitted ? '1' : '0',
            failsAfterReceived(a.channel) ? '1' : '0',
          ),
      ),
    );
    // The carrier id of a final report is not needed any more either (another slot: its own command).
    const done = advances.filter((a, i) => a.carrierId && Number(applied[i]) !== ADVANCE_REFUSED && isFinal(a.status));
    if (done.length > 0)
      await each(
        'expiring carrier ids',
        done.map((a) => () => client.expire(carrierKey(a.carrierId!), finalTtlSeconds)),
      );
    return applied.map((r) => Number(r) as AdvanceOutcome);
  }

  return {
    ...createRedisScreening(client, prefix, each, write, open),
    ...createRedisCarrierSnapshots(client, prefix, each, open),
    ...createRedisCampaignControl(client, prefix, each, write, open),
    ...createRedisIdempotency(client, prefix, each, write, open),
    ...createRedisLossMarkers(client, prefix, each, write, open),
    ...createRedisLeases(client, prefix, each, open),

    async advanceStatuses(advances: readonly StatusAdvance[]): Promise<boolean[]> {
      return (await advanceNotingSkips(advances)).map((o) => o !== ADVANCE_REFUSED);
    },

    advanceStatusesNotingSkips: (advances: readonly StatusAdvance[]) => advanceNotingSkips(advances),

    async getStatus(id: string): Promise<StatusEntry | undefined> {
      open();
      const [value] = await each('reading a status', [() => client.get(statusKey(id))]);
      return value === null || value === undefined ? undefined : parseStatus(value);
    },

    async putCarrierIds(pairs): Promise<void> {
      open();
      if (pairs.length === 0) return;
      // The submit marker holds how many parts the message went in (its pairs here): written before the carrier ids.
      const counts = new Map<string, number>();
      for (const p of pairs) counts.set(p.messageId, (counts.get(p.messageId) ?? 0) + 1);
      const keys = [...[...counts.keys()].map(submittedKey), ...pairs.map((p) => carrierKey(p.carrierId))];
      await write('storing carrier ids', keys, [
        ...[...counts].map(
          ([id, count]) =>
            () =>
              client.set(submittedKey(id), String(count), 'EX', ttlSeconds),
        ),
        ...pairs.map((p) => () => client.set(carrierKey(p.carrierId), p.messageId, 'EX', ttlSeconds)),
      ]);
    },

    async deliveredWhole(reports): Promise<boolean[]> {
      open();
      if (reports.length === 0) return [];
      const whole = await write(
        'counting delivered parts',
        reports.map((r) => partsKey(r.messageId)),
        reports.map((r) => () => scripted.hermodDeliveredWhole(submittedKey(r.messageId), partsKey(r.messageId), r.carrierId, ttlSeconds)),
      );
      return whole.map((n) => Number(n) === 1);
    },

    async rememberLastMessages(entries): Promise<void> {
      open();
      if (entries.length === 0) return;
      const now = Date.now();
      const keys: string[] = [];
      const commands: (() => Promise<unknown>)[] = [];
      // A batch (a campaign's partition) mostly comes from one address: its senders are written once.
      const senders = new Map<string, Set<string>>();
      for (const e of entries) {
        const value = `${e.applicationId}|${e.messageId}`;
        keys.push(lastMessageKey(e.handset));
        commands.push(() => client.set(lastMessageKey(e.handset), value, 'EX', ttlSeconds));
        if (!e.source) continue;
        keys.push(lastFromKey(e.source, e.handset));
        commands.push(() => client.set(lastFromKey(e.source, e.handset), value, 'EX', ttlSeconds));
        const apps = senders.get(e.source) ?? new Set<string>();
        apps.add(e.applicationId);
        senders.set(e.source, apps);
      }
      // Each command touches one key, so on a cluster every one goes to its own slot's master.
      for (const [source, apps] of senders) {
        const key = sendersKey(source);
        keys.push(key);
        commands.push(() => client.zadd(key, ...[...apps].flatMap((app) => [now, app])));
        commands.push(() => client.zremrangebyscore(key, '-inf', now - ttlSeconds * 1000));
        commands.push(() => client.expire(key, ttlSeconds));
      }
      await write('remembering last messages', keys, commands);
    },

    async rememberSenders(entries): Promise<void> {
      open();
      const since = Date.now() - ttlSeconds * 1000;
      const byAddress = new Map<string, (string | number)[]>();
      for (const e of entries) {
        if (!e.address || e.at <= since) continue;
        const scored = byAddress.get(e.address) ?? [];
        scored.push(e.at, e.applicationId);
        byAddress.set(e.address, scored);
      }
      if (byAddress.size === 0) return;
      const keys: string[] = [];
      const commands: (() => Promise<unknown>)[] = [];
      for (const [address, scored] of byAddress) {
        const key = sendersKey(address);
        keys.push(key);
        // GT: a later send already known keeps its time.
        commands.push(() => client.zadd(key, 'GT', ...scored));
        commands.push(() => client.expire(key, ttlSeconds));
      }
      await write('remembering the senders of addresses', keys, commands);
    },

    async getLastMessage(handset: string) {
      open();
      const [value] = await each('reading the last message to a handset', [() => client.get(lastMessageKey(handset))]);
      return parseLast(value ?? null);
    },

    async getReplyContext(handset: string, address: string): Promise<ReplyContext> {
      open();
      // One key per command: on a cluster each goes to its own slot.
      const reads: (() => Promise<unknown>)[] = [() => client.get(lastMessageKey(handset))];
      if (address) {
        reads.push(() => client.get(lastFromKey(address, handset)));
        reads.push(() => client.zrangebyscore(sendersKey(address), Date.now() - ttlSeconds * 1000, '+inf'));
      }
      const [last, lastFrom, senders] = await each('reading what a reply answers', reads);
      return {
        lastToHandset: parseLast((last as string | null) ?? null),
        lastFromAddress: address ? parseLast((lastFrom as string | null) ?? null) : undefined,
        sendersOfAddress: address ? (senders as string[]) : [],
      };
    },

    async takeRateTokens(key: string, limitPerSecond: number, wanted: number): Promise<RateGrant> {
      open();
      try {
        const [granted, endsIn] = await (client as unknown as ScriptedClient).hermodTakeRate(
          rateKey(key),
          Math.floor(limitPerSecond),
          Math.max(0, Math.floor(wanted)),
        );
        return { granted: Number(granted), windowEndsInMs: Number(endsIn) };
      } catch (err) {
        throw unavailable('taking from a rate limit', err);
      }
    },

    async wereSubmitted(messageIds: readonly string[]): Promise<boolean[]> {
      open();
      if (messageIds.length === 0) return [];
      // One EXISTS per key, not one EXISTS of many: the keys live in different cluster slots.
      const found = await each(
        'reading submit markers',
        messageIds.map((id) => () => client.exists(submittedKey(id))),
      );
      return found.map((n) => n === 1);
    },

    async cancelSends(messageIds: readonly string[]): Promise<void> {
      open();
      if (messageIds.length === 0) return;
      const keys = messageIds.map(cancelledKey);
      await write(
        'storing cancel markers',
        keys,
        keys.map((k) => () => client.set(k, '1', 'EX', ttlSeconds)),
      );
    },

    async claimSends(claims, ttlMs): Promise<boolean[]> {
      open();
      if (claims.length === 0) return [];
      const keys = claims.map((c) => sendClaimKey(c.messageId));
      const taken = await write(
        'claiming sends',
        keys,
        claims.map((c, i) => () => scripted.hermodClaimSend(keys[i]!, c.token, Math.max(1, Math.trunc(ttlMs)))),
      );
      return taken.map((n) => Number(n) === 1);
    },

    async releaseSends(claims): Promise<void> {
      open();
      if (claims.length === 0) return;
      await each(
        'releasing send claims',
        claims.map((c) => () => scripted.hermodReleaseSend(sendClaimKey(c.messageId), c.token)),
      );
    },

    async wereCancelled(messageIds: readonly string[]): Promise<boolean[]> {
      open();
      if (messageIds.length === 0) return [];
      const found = await each(
        'reading cancel markers',
        messageIds.map((id) => () => client.exists(cancelledKey(id))),
      );
      return found.map((n) => n === 1);
    },

    async getMessageIdByCarrierId(carrierId: string): Promise<string | undefined> {
      open();
      const [messageId] = await each('reading a carrier id', [() => client.get(carrierKey(carrierId))]);
      return messageId ?? undefined;
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
