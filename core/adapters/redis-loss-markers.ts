import { randomUUID } from 'node:crypto';
import type { HotState } from '../ports/state';
import { hashSlot, type RedisClient } from './redis-connection';

type Each = <T>(what: string, commands: (() => Promise<T>)[]) => Promise<T[]>;
type Write = <T>(what: string, keys: string[], commands: (() => Promise<T>)[]) => Promise<T[]>;

/**
 * Markers, one in each 1/64 of the slots (256 slots in a row): a Cluster
 * master holding 511 slots in a row holds one, and so does every master of a
 * Cluster of up to 32 masters with even ranges.
 */
const MARKERS = 64;
const HASH_SLOTS = 16384;

/**
 * `count` hash tags, the i-th hashing into the i-th of `count` equal ranges
 * of the slots: keys with these tags reach every master of a Cluster that
 * holds at least HASH_SLOTS / count slots in a row.
 */
export function tagsAcrossSlots(count: number): string[] {
  const width = HASH_SLOTS / count;
  const tags: (string | undefined)[] = new Array(count);
  let left = count;
  for (let n = 0; left > 0; n++) {
    const range = Math.floor(hashSlot(`s${n}`) / width);
    if (tags[range] !== undefined) continue;
    tags[range] = `s${n}`;
    left--;
  }
  return tags as string[];
}

/**
 * Finds a Redis, or any master of a Cluster, back without its data:
 * `<prefix>:intact:{<tag>}` markers spread over the slots, and the notice
 * `<prefix>:data-lost` of the last loss a core found. A core that finds a
 * marker gone puts it back and writes a new notice; every other core sees the
 * notice change at its next look. So a loss is known to every core, not only
 * to the one that looked first (which also loads the lists again, and other
 * cores then find nothing missing). A first look tells a loss only when this
 * core wrote the notice: a Redis that was empty when it started.
 */
export function createRedisLossMarkers(client: RedisClient, prefix: string, each: Each, write: Write, open: () => void): Pick<HotState, 'dataLost'> {
  const markers = tagsAcrossSlots(MARKERS).map((tag) => `${prefix}:intact:{${tag}}`);
  const noticeKey = `${prefix}:data-lost`;
  /** The notice at this object's last look; undefined before the first. */
  let seen: string | null | undefined;
  return {
    async dataLost() {
      open();
      const found = await each('looking for data hot state lost', [
        ...markers.map((key) => () => client.exists(key)),
        () => client.get(noticeKey) as Promise<number | string | null>,
      ]);
      const missing = markers.filter((_, i) => Number(found[i]) !== 1);
      let notice = (found[markers.length] ?? null) as string | null;
      let mine: string | undefined;
      if (missing.length > 0) {
        const written = `${new Date().toISOString()} ${randomUUID()}`;
        mine = written;
        const was = notice;
        // A notice gone with the rest is written once, whichever core comes first (cores starting together on an empty
        // Redis agree on one, and none takes another's for a loss); one still there is replaced, so every core hears.
        await write(
          'marking what hot state holds',
          [...missing, noticeKey],
          [...missing.map((key) => () => client.set(key, '1')), () => (was === null ? client.set(noticeKey, written, 'NX') : client.set(noticeKey, written))],
        );
        const [now] = await each('reading the notice of data hot state lost', [() => client.get(noticeKey)]);
        notice = now ?? null;
      }
      const first = seen === undefined;
      const changed = notice !== seen;
      seen = notice;
      // At the first look, a loss is one this core found (its notice written): a Redis empty at its start, new or
      // back without its data while no core looked. Of cores starting together on it, one finds it, not each.
      if (first) return missing.length > 0 && notice === mine;
      return missing.length > 0 || changed;
    },
  };
}
