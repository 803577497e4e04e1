import { Redis } from 'ioredis';

export interface RedisSample {
  /** ms since the first sample of this process. */
  at: number;
  /** INFO memory `used_memory` of the whole server. */
  usedMemory: number;
  /** INFO cpu `used_cpu_user` + `used_cpu_sys` of the whole server, seconds since it started. */
  cpuSeconds: number;
  /** Streams under the prefix, their entries (XLEN) and bytes (MEMORY USAGE). */
  streams: number;
  entries: number;
  streamBytes: number;
  /** Entries per topic (`hermod.sms.v1` → XLEN summed over its partitions), to tell which stream grows. */
  byTopic: Record<string, number>;
}

const started = performance.now();

/** One look at Redis: server memory, and the streams hermod keeps under `prefix` (`{prefix:topic:partition}`). */
export async function sampleRedis(url: string, prefix: string): Promise<RedisSample> {
  const redis = new Redis(url);
  try {
    const at = performance.now() - started;
    const usedMemory = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
    const cpu = await redis.info('cpu');
    const cpuSeconds = Number(/used_cpu_user:([\d.]+)/.exec(cpu)?.[1] ?? NaN) + Number(/used_cpu_sys:([\d.]+)/.exec(cpu)?.[1] ?? NaN);
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `{${prefix}:*`, 'COUNT', 1000, 'TYPE', 'stream');
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    const pipeline = redis.pipeline();
    for (const key of keys) pipeline.xlen(key).memory('USAGE', key, 'SAMPLES', '0');
    const results = (await pipeline.exec()) ?? [];
    let entries = 0;
    let streamBytes = 0;
    const byTopic: Record<string, number> = {};
    results.forEach(([, value], i) => {
      if (i % 2 === 1) {
        streamBytes += Number(value ?? 0);
        return;
      }
      entries += Number(value ?? 0);
      const topic = /^\{[^:]+:(.+):\d+\}$/.exec(keys[i / 2]!)?.[1] ?? keys[i / 2]!;
      byTopic[topic] = (byTopic[topic] ?? 0) + Number(value ?? 0);
    });
    return { at, usedMemory, cpuSeconds, streams: keys.length, entries, streamBytes, byTopic };
  } finally {
    redis.disconnect();
  }
}

/** Least-squares slope of `value` over the samples' time, per minute (0 with fewer than two samples). */
export function slopePerMinute<T extends { at: number }>(samples: readonly T[], value: (s: T) => number): number {
  if (samples.length < 2) return 0;
  const xs = samples.map((s) => s.at / 60_000);
  const ys = samples.map(value);
  const mx = xs.reduce((a, x) => a + x, 0) / xs.length;
  const my = ys.reduce((a, y) => a + y, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * (ys[i]! - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}
