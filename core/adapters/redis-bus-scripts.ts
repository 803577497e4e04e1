import type { ChainableCommander, Redis } from 'ioredis';
import { TRIM_ACKNOWLEDGED_LUA } from './redis-stream-trim';

/** Most entries one script or claim step moves at a time. */
export const CLAIM_CHUNK = 1000;

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

/** The bus' scripts, as commands of a connection or of a pipeline on it once defineRedisBusScripts has run. */
export interface RedisBusScripts {
  hermodLeaseRenew(lease: string, token: string, ms: number): Promise<number>;
  hermodLeaseRelease(stream: string, lease: string, group: string, consumer: string, token: string, idleMs: number): Promise<number>;
  hermodMembers(members: string, id: string, ttlMs: number, leave: '0' | '1'): Promise<string[]>;
  hermodPruneConsumers(stream: string, group: string, consumer: string, minIdleMs: number): Promise<number>;
  hermodTrimAcknowledged(stream: string, keepMs: number): Promise<number>;
}

/** Defines the scripts as commands of `client` and of its pipelines. */
export function defineRedisBusScripts(client: Redis): void {
  client.defineCommand('hermodLeaseRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  client.defineCommand('hermodLeaseRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
  client.defineCommand('hermodMembers', { numberOfKeys: 1, lua: MEMBERS_LUA });
  client.defineCommand('hermodPruneConsumers', { numberOfKeys: 1, lua: PRUNE_LUA });
  client.defineCommand('hermodTrimAcknowledged', { numberOfKeys: 1, lua: TRIM_ACKNOWLEDGED_LUA });
}

/** The scripts of a connection or pipeline on which defineRedisBusScripts has run (ioredis does not type defined commands). */
export const busScripts = (client: Redis | ChainableCommander): RedisBusScripts => client as unknown as RedisBusScripts;
