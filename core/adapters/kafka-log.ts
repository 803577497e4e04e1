import { logLevel, type LogEntry, type logCreator } from 'kafkajs';
import type { Logger, LogLevel } from '../../lib/log';

/**
 * kafkajs's own log, written through hermod's logger (one JSON line per
 * event, with the role and the `kafka` namespace), so an operator reads one
 * format. Two things kafkajs logs as errors are part of a normal start and
 * are told at a lower level:
 *
 * - a CreateTopics answer that the topic exists: core and the workers each
 *   make sure of the topics they use, and all but the first find them made
 *   (any other failure to create a topic still reaches hermod as an error);
 * - a consumer's restart while its group coordinator is still loading, which
 *   a fresh broker does for its first seconds.
 */
export function kafkaLogCreator(log: Logger): logCreator {
  // Groups whose consumer crashed on a loading coordinator: their restart line is told at the same level.
  const loading = new Set<string>();
  return () =>
    ({ namespace, level, log: entry }: LogEntry) => {
      const { message, timestamp: _t, logger: _l, ...fields } = entry;
      const group = typeof fields.groupId === 'string' ? fields.groupId : '';
      let at = levelOf(level);
      if (message.startsWith('Response CreateTopics') && fields.error === 'Topic creation errors') at = 'debug';
      else if (/coordinator is loading/i.test(`${message} ${fields.error ?? ''}`)) {
        at = 'info';
        loading.add(group);
        delete fields.stack;
      } else if (message.startsWith('Restarting the consumer') && loading.delete(group)) at = 'info';
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
