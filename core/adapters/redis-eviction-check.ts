import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '../../lib/log';
import type { RedisClient } from './redis-connection';

/**
 * Warns when a Redis that holds hot state may evict keys: opt-outs, block
 * lists and idempotency answers must not vanish under memory pressure (an
 * evicted opt-out set whose slot marker survives would let a send through to
 * a handset that said STOP). Asks each master for `maxmemory-policy`; a Redis
 * that refuses CONFIG (many managed ones) is left unjudged.
 */
export async function warnUnlessNoEviction(client: RedisClient, log: Logger): Promise<void> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    try {
      const [, policy] = (await node.config('GET', 'maxmemory-policy')) as string[];
      const [, limit] = (await node.config('GET', 'maxmemory')) as string[];
      // Without a memory limit nothing is evicted, whatever the policy.
      if (policy && policy !== 'noeviction' && limit !== '0') {
        log.warn(
          `Redis may evict hot state (maxmemory-policy ${policy}): set maxmemory-policy noeviction, or opt-outs, block lists and idempotency answers can be lost`,
          { node: `${node.options.host}:${node.options.port}`, policy },
        );
      }
    } catch (err) {
      log.debug('could not read Redis maxmemory-policy', { err });
    }
  }
}
