import type { HotState } from '../ports/state';
import type { RedisClient } from './redis-connection';

type Each = <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>;

// Takes the lease when free or already this holder's, and sets its time; otherwise answers who holds it.
const HOLD_LEASE_LUA = `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return false
end
return holder
`;

interface LeaseScripts {
  hermodHoldLease(key: string, holder: string, ttlMs: number): Promise<string | null>;
}

/** Named leases in Redis (`<prefix>:lease:{<name>}`), held by one process of the deployment at a time. */
export function createRedisLeases(client: RedisClient, prefix: string, each: Each, open: () => void): Pick<HotState, 'holdLease'> {
  if (!(client as unknown as Partial<LeaseScripts>).hermodHoldLease) client.defineCommand('hermodHoldLease', { numberOfKeys: 1, lua: HOLD_LEASE_LUA });
  const scripted = client as unknown as LeaseScripts;
  return {
    async holdLease(name, holder, ttlMs) {
      open();
      const [other] = await each('holding a lease', [() => scripted.hermodHoldLease(`${prefix}:lease:{${name}}`, holder, Math.max(1, Math.round(ttlMs)))]);
      return other ?? undefined;
    },
  };
}
