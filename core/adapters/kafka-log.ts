import { createRequire } from 'node:module';
import { logLevel, type LogEntry, type logCreator } from 'kafkajs';
import type { Logger, LogLevel } from '../../lib/log';

/**
 * kafkajs's own log, written through hermod's logger (one JSON line per
 * event, with the role and the `kafka` namespace), so an operator reads one
 * format. Some of what kafkajs logs as errors is part of a normal start or
 * of a leader moving, and is told at a lower level:
 *
 * - a CreateTopics answer that the topic exists: core and the workers each
 *   make sure of the topics they use, and all but the first find them made
 *   (any other failure to create a topic still reaches hermod as an error);
 * - an answer that a group's or transactions' coordinator is not available
 *   yet or still loading: every start of core or a worker meets one while
 *   Kafka sets up its coordinators, and kafkajs asks again, so as debug (a
 *   consumer that crashed on one after its retries stays info);
 * - answers with another transient Kafka error that kafkajs retries (a
 *   coordinator that moved to another broker, a leader being elected, a group rebalancing, a topic not yet known to a broker, a
 *   leader that moved), and a consumer's crash and restart after any transient
 *   error, as info; any other answer Kafka marks
 *   retriable as a warning (a broker's storage error or corrupt data stays an
 *   error). If the retries run out, the failure reaches hermod's adapter and
 *   is logged there as an error; a consumer that keeps crashing without
 *   rejoining its group is logged as an error by kafka-crash-watch.ts;
 * - a broker that cannot be reached, at every try and in every consumer
 *   crash it causes, as one warning every 5 s with the count of tries (a
 *   trial's 20 s broker restart made some 90 error lines before).
 */
/** Retriable by Kafka's protocol, but a broker's disk or data going bad: an operator must hear of it at once. */
const STILL_ERRORS: ReadonlySet<string> = new Set(['KAFKA_STORAGE_ERROR', 'CORRUPT_MESSAGE']);

/** Every error Kafka's protocol marks retriable, as kafkajs words it (kafkajs retries these itself), but those above. */
const RETRIABLE: ReadonlySet<string> = (() => {
  try {
    const table = createRequire(import.meta.url)('kafkajs/src/protocol/error') as { errorCodes: { type: string; message: string; retriable: boolean }[] };
    return new Set(table.errorCodes.filter((e) => e.retriable && !STILL_ERRORS.has(e.type)).map((e) => e.message));
  } catch {
    return new Set<string>();
  }
})();

/** A coordinator still being set up, as kafkajs words Kafka's answer (for groups and for transactional producers alike). */
const COORDINATOR_NOT_READY: ReadonlySet<string> = new Set([
  'The group coordinator is not available',
  "The coordinator is loading and hence can't process requests for this group",
]);

const TRANSIENT = [
  ...COORDINATOR_NOT_READY,
  'This is not the correct coordinator for this group',
  'There is no leader for this topic-partition as we are in the middle of a leadership election',
  'The group is rebalancing, so a rejoin is needed',
  'This server does not host this topic-partition',
  'This server is not the leader for that topic-partition',
];

/** What kafkajs says at every try to reach a broker that is away: hundreds of lines a minute per process. */
const UNREACHABLE = /^(Connection error|Failed to connect to seed broker)/;
/** A consumer crashed because its broker is away (kafkajs restarts it): part of the same outage, not an error of its own. */
const CRASHED_UNREACHABLE = /^Crash: \w+: (Connection error|Failed to connect to seed broker)/;
/** While brokers are away, how often a process says so (with how many tries failed since). */
const UNREACHABLE_EVERY_MS = 5_000;

export function kafkaLogCreator(log: Logger, now: () => number = Date.now): logCreator {
  // Groups whose consumer crashed on a transient error: their restart line is told at the same level.
  const transient = new Set<string>();
  // Tries that failed to reach a broker since the last line that said so.
  let unreachable = { toldAt: Number.NEGATIVE_INFINITY, since: 0 };
  return () =>
    ({ namespace, level, log: entry }: LogEntry) => {
      const { message, timestamp: _t, logger: _l, ...fields } = entry;
      const crashedAway = CRASHED_UNREACHABLE.test(message);
      // Its restart line goes with it, at info.
      if (crashedAway && typeof fields.groupId === 'string') transient.add(fields.groupId);
      if (UNREACHABLE.test(message) || crashedAway) {
        // kafkajs tries again by itself: a warning every few seconds while it lasts, with the count, not one a try.
        unreachable.since += 1;
        if (now() - unreachable.toldAt < UNREACHABLE_EVERY_MS) return;
        delete fields.stack;
        log.warn(message, { kafka: namespace, ...fields, ...(unreachable.since > 1 ? { failedTriesSinceLastLine: unreachable.since } : {}) });
        unreachable = { toldAt: now(), since: 0 };
        return;
      }
      const group = typeof fields.groupId === 'string' ? fields.groupId : '';
      let at = levelOf(level);
      if (message.startsWith('Response CreateTopics') && fields.error === 'Topic creation errors') at = 'debug';
      else if (message.startsWith('Response ') && typeof fields.error === 'string' && COORDINATOR_NOT_READY.has(fields.error)) at = 'debug';
      else if (TRANSIENT.some((t) => message.includes(t) || fields.error === t)) {
        at = 'info';
        if (message.startsWith('Crash:')) transient.add(group);
        delete fields.stack;
      } else if (message.startsWith('Restarting the consumer') && transient.delete(group)) at = 'info';
      // Any other answer Kafka calls retriable: kafkajs tries again, so a warning; if it gives up, the adapter's error says so.
      else if (at === 'error' && typeof fields.error === 'string' && RETRIABLE.has(fields.error)) at = 'warn';
      if (at) log[at](message, { kafka: namespace, ...fields });
    };
}

function levelOf(level: logLevel): LogLevel | undefined {
  switch (level) {
    case logLevel.ERROR:
      return 'error';
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'info';
    case logLevel.DEBUG:
      return 'debug';
    default:
      return undefined;
  }
}
