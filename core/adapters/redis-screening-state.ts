import { randomUUID } from 'node:crypto';
import { candidatePrefixes, blockableNumber } from '../domain/block-prefix';
import { handsetKey } from '../domain/handset-key';
import type { HotState } from '../ports/state';
import { HermodError } from '../../lib/errors';
import type { RedisClient } from './redis-connection';

type Screening = Pick<
  HotState,
  | 'setOptOuts'
  | 'areOptedOut'
  | 'takeQuota'
  | 'setBlocks'
  | 'findBlocks'
  | 'screeningMissing'
  | 'screeningRefused'
  | 'beginScreeningLoad'
  | 'markScreeningLoaded'
>;

type Each = <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>;

/** The hash tag of a scope's lists: an application id, or `*` for the global block list. */
const tagOf = (scope: string): string => scope || '*';

/**
 * KEYS[1] the scope's set of loads under way, KEYS[2] its loaded marker (one
 * slot); ARGV[1] the token a load began with, ARGV[2] the time. Marks the
 * scope loaded only if the token is still there: a Redis (or one Cluster
 * master) that lost its data during the load lost the token too.
 */
const MARK_LOADED_LUA = `
if redis.call('SREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
`;

/** How long the tokens of loads under way are kept (a core that died mid-load leaves its token this long). */
const LOADING_TTL_MS = 3_600_000;

interface MarkClient {
  hermodMarkScreeningLoaded(loadingKey: string, loadedKey: string, token: string, at: string): Promise<number>;
}

/**
 * Reads of opt-outs and block lists with a look, in the same round trip, at
 * the marker core sets in each list's slot once it has loaded them
 * (`<prefix>:screening-loaded:{<application id or *>}`): a Redis, or one
 * master of a Cluster, that restarted empty has lost the lists and their
 * marker together, and a send screened against nothing would reach a
 * handset that said STOP.
 */
function createScreeningGuard(client: RedisClient, prefix: string, each: Each) {
  const loadedKey = (scope: string): string => `${prefix}:screening-loaded:{${tagOf(scope)}}`;
  const loadingKey = (scope: string): string => `${prefix}:screening-loading:{${tagOf(scope)}}`;
  /** Scopes a read found without their marker, until screeningRefused takes them. */
  let refused = new Set<string>();
  return {
    loadedKey,
    loadingKey,
    takeRefused(): string[] {
      const taken = [...refused];
      refused = new Set();
      return taken;
    },
    async screened<T>(what: string, scopes: readonly string[], commands: (() => Promise<T>)[]): Promise<T[]> {
      const distinct = [...new Set(scopes)];
      const answers = await each<unknown>(what, [...commands, ...distinct.map((scope) => () => client.exists(loadedKey(scope)))]);
      const markers = answers.splice(commands.length);
      const lost = distinct.filter((_, i) => Number(markers[i]) !== 1);
      if (lost.length > 0) {
        for (const scope of lost) refused.add(scope);
        throw new HermodError(
          'unavailable',
          'hot state has lost the opt-outs and block lists (Redis restarted without its data?); core is loading them again',
          {
            retryable: true,
          },
        );
      }
      return answers as T[];
    },
  };
}

/**
 * KEYS[1] quota counter; ARGV: limit, wanted, time to live (ms) of a new
 * counter, what a new counter starts from (its seed). Read, decide and add in
 * one script, so concurrent takers in any number of processes are never
 * granted more than the limit between them; of several seeds for a new
 * counter, the first one's is kept.
 */
const TAKE_QUOTA_LUA = `
local limit = tonumber(ARGV[1])
local wanted = tonumber(ARGV[2])
local current = redis.call('GET', KEYS[1])
local used
if current then
  used = tonumber(current)
else
  used = tonumber(ARGV[4])
  if used > 0 then redis.call('SET', KEYS[1], used, 'PX', ARGV[3]) end
end
local granted = math.max(0, math.min(wanted, limit - used))
if granted > 0 then
  redis.call('INCRBY', KEYS[1], granted)
  if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
end
return granted
`;

interface QuotaClient {
  hermodTakeQuota(key: string, limit: number, wanted: number, ttlMs: number, seed: number): Promise<number>;
}

/**
 * Opt-outs, quota counters and block lists of the Redis hot state: the
 * opt-outs are one set of handset keys per application,
 * `<prefix>:optout:{<application id>}`; a counter is one string key per
 * application and period, `<prefix>:quota:{<key>}`; a block list is one set
 * per scope, `<prefix>:block:{<application id>}` and `<prefix>:block:{*}` for
 * the global one. Every command touches one key (one
 * cluster slot); a batch is sent together (auto-pipelined, one round trip).
 * A destination is looked up with one SMISMEMBER of all its prefixes per list.
 */
export function createRedisScreening(
  client: RedisClient,
  prefix: string,
  each: <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>,
  write: <T>(what: string, keys: string[], commands: (() => Promise<T>)[]) => Promise<T[]>,
  open: () => void,
): Screening {
  client.defineCommand('hermodTakeQuota', { numberOfKeys: 1, lua: TAKE_QUOTA_LUA });
  client.defineCommand('hermodMarkScreeningLoaded', { numberOfKeys: 2, lua: MARK_LOADED_LUA });
  const quota = client as unknown as QuotaClient;
  const marks = client as unknown as MarkClient;
  const guard = createScreeningGuard(client, prefix, each);
  const quotaKey = (key: string): string => `${prefix}:quota:{${key}}`;
  const blockKey = (scope: string): string => `${prefix}:block:{${tagOf(scope)}}`;
  const optOutKey = (applicationId: string): string => `${prefix}:optout:{${applicationId}}`;
  return {
    async screeningMissing(scopes) {
      open();
      const exists = await each(
        'looking for the opt-outs and block lists',
        scopes.map((scope) => () => client.exists(guard.loadedKey(scope))),
      );
      return scopes.filter((_, i) => Number(exists[i]) !== 1);
    },
    async screeningRefused() {
      open();
      return guard.takeRefused();
    },
    async beginScreeningLoad(scopes) {
      open();
      const token = randomUUID();
      const keys = scopes.map(guard.loadingKey);
      // A set of the loads under way: another core's load beside this one adds its own token, not replaces this one's.
      await write(
        'starting to load the opt-outs and block lists',
        keys,
        keys.flatMap((key) => [() => client.sadd(key, token), () => client.pexpire(key, LOADING_TTL_MS)]),
      );
      return token;
    },
    async markScreeningLoaded(scopes, token) {
      open();
      const keys = scopes.map(guard.loadedKey);
      const at = String(Date.now());
      const marked = await write(
        'marking the opt-outs and block lists loaded',
        keys,
        scopes.map((scope, i) => () => marks.hermodMarkScreeningLoaded(guard.loadingKey(scope), keys[i]!, token, at)),
      );
      return marked.every((m) => Number(m) === 1);
    },
    async setOptOuts(entries) {
      open();
      if (entries.length === 0) return;
      const keys = entries.map((e) => optOutKey(e.applicationId));
      await write(
        'storing opt-outs',
        keys,
        entries.map((e, i) => () => (e.optedOut ? client.sadd(keys[i]!, handsetKey(e.handset)) : client.srem(keys[i]!, handsetKey(e.handset)))),
      );
    },
    async areOptedOut(pairs) {
      open();
      if (pairs.length === 0) return [];
      const members = await guard.screened(
        'reading opt-outs',
        pairs.map((p) => p.applicationId),
        pairs.map((p) => () => client.sismember(optOutKey(p.applicationId), handsetKey(p.handset))),
      );
      return members.map((r) => Number(r) === 1);
    },
    async takeQuota(takes) {
      open();
      if (takes.length === 0) return [];
      const keys = takes.map((t) => quotaKey(t.key));
      const granted = await write(
        'taking from a quota',
        keys,
        takes.map(
          (t, i) => () =>
            quota.hermodTakeQuota(
              keys[i]!,
              Math.floor(t.limit),
              Math.max(0, Math.floor(t.wanted)),
              Math.max(1, Math.ceil(t.ttlMs)),
              Math.max(0, Math.floor(t.seed ?? 0)),
            ),
        ),
      );
      return granted.map(Number);
    },
    async setBlocks(entries) {
      open();
      if (entries.length === 0) return;
      const keys = entries.map((e) => blockKey(e.scope));
      await write(
        'storing block-list entries',
        keys,
        entries.map((e, i) => () => (e.blocked ? client.sadd(keys[i]!, e.prefix) : client.srem(keys[i]!, e.prefix))),
      );
    },
    async findBlocks(sends) {
      open();
      const numbers = sends.map((s) => blockableNumber(s.destination));
      const commands: (() => Promise<number[]>)[] = [];
      const scopes: string[] = [];
      const asked: { send: number; candidates: string[] }[] = [];
      sends.forEach((s, i) => {
        const number = numbers[i];
        if (number === undefined) return;
        const candidates = candidatePrefixes(number);
        for (const scope of ['', s.applicationId]) {
          asked.push({ send: i, candidates });
          scopes.push(scope);
          commands.push(() => client.smismember(blockKey(scope), ...candidates));
        }
      });
      const answers = await guard.screened('reading block lists', scopes, commands);
      // The longest listed prefix of either list.
      const found: (string | undefined)[] = sends.map(() => undefined);
      answers.forEach((members, j) => {
        const { send, candidates } = asked[j]!;
        for (let k = candidates.length - 1; k >= 0; k--) {
          if (Number(members[k]) !== 1) continue;
          const current = found[send];
          if (current === undefined || candidates[k]!.length > current.length) found[send] = candidates[k];
          break;
        }
      });
      return found;
    },
  };
}
