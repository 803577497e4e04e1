import type { Logger } from '../../lib/log';

/**
 * Counts a consumer's crashes since it last joined its group. kafkajs restarts
 * a crashed consumer by itself, and kafka-log.ts tells a crash on a transient
 * error (a coordinator loading, a leader moving) as info; a consumer that
 * keeps crashing without ever rejoining — a coordinator that does not come
 * back — reads nothing, and that is an error an operator must see: logged at
 * the `errorAfter`-th crash in a row and at every `errorAfter` more.
 */
export function watchConsumerCrashes(log: Logger, at: { group: string; topic: string }, errorAfter = 3) {
  let crashes = 0;
  return {
    joined(): void {
      crashes = 0;
    },
    crashed(err: unknown): void {
      crashes += 1;
      if (crashes % errorAfter === 0) log.error('Kafka consumer keeps crashing without rejoining its group', { ...at, crashes, err });
    },
  };
}
