import type { HotState, IdempotencyRecord } from '../ports/state';
import type { RedisClient } from './redis-connection';

/**
 * The value of a key is the JSON of `{ fingerprint, claim }` while claimed and
 * `{ fingerprint, response, claim }` once answered, `claim` naming the claim
 * that holds it (or stored the answer). Each script reads it and acts only for
 * that claim, in one step, so no other claim can take the key in between.
 * A claim id of '' (a gateway from before claim ids, during an upgrade)
 * completes and releases as before them, and so does any claim id on a key
 * claimed before them (no `claim`).
 */

/** KEYS[1] key; ARGV: claim, lease ms. Extends the lease while the key is still claimed by this claim. */
const RENEW_LUA = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local held = cjson.decode(v)
if held.claim ~= ARGV[1] or held.response ~= nil then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * KEYS[1] key; ARGV: claim, value, ttl ms. Stores the answer while the key is
 * held by this claim or, its lease run out, by nobody; 1 when it is this
 * claim's answer that is kept (a repeated call included).
 */
const COMPLETE_LUA = `
local v = redis.call('GET', KEYS[1])
if v then
  local held = cjson.decode(v)
  if ARGV[1] ~= '' and type(held.claim) == 'string' and held.claim ~= ARGV[1] then return 0 end
  if held.response ~= nil then return 1 end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

/** KEYS[1] key; ARGV: claim. Deletes the key while it is still claimed, unanswered, by this claim. */
const RELEASE_LUA = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local held = cjson.decode(v)
if held.response ~= nil then return 0 end
if ARGV[1] ~= '' and type(held.claim) == 'string' and held.claim ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

interface IdempotencyClient {
  hermodRenewIdempotency(key: string, claim: string, ttlMs: number): Promise<number>;
  hermodCompleteIdempotency(key: string, claim: string, value: string, ttlMs: number): Promise<number>;
  hermodReleaseIdempotency(key: string, claim: string): Promise<number>;
}

type IdempotencyMethods = Pick<HotState, 'claimIdempotencyKey' | 'renewIdempotencyKey' | 'completeIdempotencyKey' | 'releaseIdempotencyKey'>;

/** Idempotency-Keys of the Redis hot state: one string key each, `<prefix>:idem:{<key>}` (its own cluster slot). */
export function createRedisIdempotency(
  client: RedisClient,
  prefix: string,
  each: <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>,
  write: <T>(what: string, keys: string[], commands: (() => Promise<T>)[]) => Promise<T[]>,
  open: () => void,
): IdempotencyMethods {
  client.defineCommand('hermodRenewIdempotency', { numberOfKeys: 1, lua: RENEW_LUA });
  client.defineCommand('hermodCompleteIdempotency', { numberOfKeys: 1, lua: COMPLETE_LUA });
  client.defineCommand('hermodReleaseIdempotency', { numberOfKeys: 1, lua: RELEASE_LUA });
  const scripted = client as unknown as IdempotencyClient;
  const idempotencyKey = (key: string): string => `${prefix}:idem:{${key}}`;
  return {
    async claimIdempotencyKey(key, fingerprint, claimId, ttlMs) {
      open();
      const k = idempotencyKey(key);
      const claim = async (): Promise<boolean> => {
        const [claimed] = await write(
          'claiming an idempotency key',
          [k],
          [() => client.set(k, JSON.stringify({ fingerprint, claim: claimId }), 'PX', ttlMs, 'NX')],
        );
        return claimed === 'OK';
      };
      if (await claim()) return undefined;
      const [value] = await each('claiming an idempotency key', [() => client.get(k)]);
      // Expired between the two calls: the claim is ours after all.
      if (value === null || value === undefined) return (await claim()) ? undefined : { fingerprint: '' };
      const held = JSON.parse(value) as IdempotencyRecord;
      return held.response === undefined ? { fingerprint: held.fingerprint } : { fingerprint: held.fingerprint, response: held.response };
    },

    async renewIdempotencyKey(key, claimId, ttlMs) {
      open();
      const k = idempotencyKey(key);
      const [renewed] = await write('renewing an idempotency key', [k], [() => scripted.hermodRenewIdempotency(k, claimId, ttlMs)]);
      return renewed === 1;
    },

    async completeIdempotencyKey(key, claimId, record, ttlMs) {
      open();
      const k = idempotencyKey(key);
      const value = JSON.stringify({ fingerprint: record.fingerprint, response: record.response, claim: claimId });
      const [stored] = await write('storing an idempotent response', [k], [() => scripted.hermodCompleteIdempotency(k, claimId, value, ttlMs)]);
      return stored === 1;
    },

    async releaseIdempotencyKey(key, claimId) {
      open();
      const k = idempotencyKey(key);
      await write('releasing an idempotency key', [k], [() => scripted.hermodReleaseIdempotency(k, claimId)]);
    },
  };
}
