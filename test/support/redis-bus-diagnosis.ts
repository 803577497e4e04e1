import { topicName } from '../../core/ports/bus';
import { leaseKey, streamKey } from '../../core/adapters/redis-bus-keys';
import { rawRedis } from './redis-keys';

/**
 * Where messages that never reached the carrier are held, read from Redis
 * for a test that failed: each SMS partition's consumer group (read up to,
 * pending per consumer, its owner now), and for a few of the messages their
 * hot state (status, submit mark, a worker's send claim and how long it
 * lives) and the stream entry that carries them (pending with whom, for how
 * long, read how often).
 */
export async function diagnoseRedisBus(prefix: string, partitions: number, messageIds: readonly string[]): Promise<string> {
  const redis = rawRedis();
  const lines: string[] = [];
  const group = 'sms-workers';
  try {
    const entryOf = new Map<string, { partition: number; entry: string }>();
    for (let p = 0; p < partitions; p++) {
      const key = streamKey(prefix, topicName('sms'), p);
      const [groups, summary, owner, length] = await Promise.all([
        redis.call('XINFO', 'GROUPS', key).catch((e: Error) => e.message),
        redis.call('XPENDING', key, group).catch((e: Error) => e.message),
        redis.get(leaseKey(key, group)),
        redis.xlen(key),
      ]);
      lines.push(`partition ${p}: length ${length}, owner ${owner}, groups ${JSON.stringify(groups)}, pending ${JSON.stringify(summary)}`);
      // Which entry carries which message (the id is in the record's bytes).
      const entries = (await redis.xrangeBuffer(key, '-', '+')) as [Buffer, Buffer[]][];
      for (const [id, fields] of entries) {
        const text = fields.map((f) => f.toString('latin1')).join(' ');
        for (const m of messageIds) if (text.includes(m)) entryOf.set(m, { partition: p, entry: id.toString() });
      }
    }
    for (const m of messageIds) {
      const [status, submitted, claim, claimTtl] = await Promise.all([
        redis.get(`${prefix}:msg:{${m}}:status`),
        redis.get(`${prefix}:submitted:{${m}}`),
        redis.get(`${prefix}:sending:{${m}}`),
        redis.pttl(`${prefix}:sending:{${m}}`),
      ]);
      const at = entryOf.get(m);
      const pending = at
        ? await redis.call('XPENDING', streamKey(prefix, topicName('sms'), at.partition), group, at.entry, at.entry, '1').catch((e: Error) => e.message)
        : undefined;
      lines.push(
        `${m}: status ${status}, submitted ${submitted}, send claim ${claim} (${claimTtl} ms), entry ${at ? `${at.partition}/${at.entry}` : 'not in any stream'}, pending ${JSON.stringify(pending)}`,
      );
    }
  } catch (err) {
    lines.push(`diagnosis failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    redis.disconnect();
  }
  return lines.join('\n');
}
