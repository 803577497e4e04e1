import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** The tests' Redis helpers, for every suite on the shared Redis (REDIS_URL, default 127.0.0.1:6379). */

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A key prefix no other test uses, so suites and test files can share one Redis
 * side by side: `hermod-test-<name>-<random>` (HERMOD_TEST_PREFIX replaces `hermod-test`).
 */
export const randomPrefix = (name?: string): string =>
  `${process.env.HERMOD_TEST_PREFIX ?? 'hermod-test'}-${name ? `${name}-` : ''}${randomUUID().slice(0, 8)}`;

/** A plain connection for looking at keys directly. */
export const rawRedis = (): Redis => new Redis(REDIS_URL, { lazyConnect: false });

/**
 * Deletes every key hermod created under these prefixes (`p:…` and `{p:…`). The shared Redis may
 * hold hundreds of thousands of other keys, and each SCAN walks all of them: so one MATCH pass per key
 * form on the prefixes' common start (Redis filters, little crosses the wire), then exact matching here.
 */
export async function deleteRedisKeys(...prefixes: string[]): Promise<void> {
  if (prefixes.length === 0) return;
  const common = prefixes.reduce((a, b) => {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    return a.slice(0, i);
  });
  const starts = prefixes.flatMap((p) => [`${p}:`, `{${p}:`]);
  const glob = common.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
  const redis = rawRedis();
  try {
    for (const pattern of [`${glob}*`, `{${glob}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
        cursor = next;
        const ours = keys.filter((k) => starts.some((s) => k.startsWith(s)));
        if (ours.length > 0) await redis.del(...ours);
      } while (cursor !== '0');
    }
  } finally {
    await redis.quit();
  }
}
