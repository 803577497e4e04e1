import type { Logger } from '../../lib/log';

/** How long a consumer may keep crashing without rejoining its group before that is an error (and how often it is said again). */
const ERROR_AFTER_MS = 60_000;

/**
 * Watches a consumer's crashes since it last joined its group. kafkajs
 * restarts a crashed consumer by itself, and kafka-log.ts tells a crash on a
 * transient error (a coordinator loading, a leader moving, a broker away for
 * a moment) below error; a consumer that keeps crashing without ever
 * rejoining reads nothing, and once that has lasted `errorAfterMs` (a
 * minute: a broker restarted on purpose is back sooner) it is an error an
 * operator must see, said again every `errorAfterMs` while it lasts. A
 * trial's 20 s broker restart made 17 such errors when a third crash in a
 * row was the rule.
 */
export function watchConsumerCrashes(log: Logger, at: { group: string; topic: string }, options: { errorAfterMs?: number; now?: () => number } = {}) {
  const errorAfterMs = options.errorAfterMs ?? ERROR_AFTER_MS;
  const now = options.now ?? Date.now;
  let crashes = 0;
  let since = 0;
  let toldAt = 0;
  return {
    joined(): void {
      crashes = 0;
    },
    crashed(err: unknown): void {
      const t = now();
      if (crashes === 0) {
        since = t;
        toldAt = t;
      }
      crashes += 1;
      if (t - since < errorAfterMs || t - toldAt < errorAfterMs) return;
      toldAt = t;
      log.error('Kafka consumer keeps crashing without rejoining its group', { ...at, crashes, crashingForMs: t - since, err });
    },
  };
}
