import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/** Helpers for the Redis adapters' tests (a real Redis; REDIS_URL, default 127.0.0.1:6379). */

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test uses (HERMOD_TEST_PREFIX names its first part; default `hermod-test`). */
export const randomPrefix = (): string => `${process.env.HERMOD_TEST_PREFIX ?? 'hermod-test'}-${randomUUID().slice(0, 8)}`;

/** A plain connection for looking at keys directly. */
export const rawRedis = (): Redis => new Redis(REDIS_URL, { lazyConnect: false });

/** Deletes every key the adapters created under these prefixes (`p:…` and `{p:…`), by SCAN and DEL. */
export async function deleteKeys(prefixes: Iterable<string>): Promise<void> {
  const redis = rawRedis();
  try {
    for (const prefix of prefixes) {
      for (const pattern of [`${prefix}:*`, `{${prefix}:*`]) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      }
    }
  } finally {
    await redis.quit();
  }
}
