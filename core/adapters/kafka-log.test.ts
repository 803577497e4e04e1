import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { Logger, LogLevel } from '../../lib/log';
import { kafkaLogCreator } from './kafka-log';

/** A logger that keeps what it is told. */
function keeping() {
  const lines: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: LogLevel) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, fields });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return { log, lines };
}

const entry = (level: logLevel, message: string, fields: Record<string, unknown> = {}) => ({
  namespace: 'Connection',
  level,
  label: logLevel[level],
  log: { timestamp: '2026-11-24T22:00:00.000Z', logger: 'kafkajs', message, ...fields },
});

describe('kafkajs log through hermod', () => {
  it('says a broker is unreachable once every 5 s while it lasts, as a warning with the count, not at every try (trial: 1,474 error lines in 2 minutes)', () => {
    const { log, lines } = keeping();
    let t = 1_000_000;
    const write = kafkaLogCreator(log, () => t)(logLevel.WARN);
    for (let i = 0; i < 200; i++) {
      write(entry(logLevel.ERROR, 'Connection error: connect ECONNREFUSED 127.0.0.1:48092', { broker: 'localhost:48092', stack: 'Error: …' }));
      write({
        ...entry(logLevel.ERROR, 'Failed to connect to seed broker, trying another broker from the list: Connection error', { retryCount: i }),
        namespace: 'BrokerPool',
      });
      t += 50;
    }
    expect(lines.map((l) => l.level)).toEqual(['warn', 'warn']);
    expect(lines[0]).toEqual({
      level: 'warn',
      msg: 'Connection error: connect ECONNREFUSED 127.0.0.1:48092',
      fields: { kafka: 'Connection', broker: 'localhost:48092' },
    });
    expect(lines[1]!.fields.failedTriesSinceLastLine).toBe(200);
  });

  it('tells consumers crashing while their broker is away, and their restarts, within that one warning every 5 s, not as errors (trial: some 90 error lines for a 20 s broker restart)', () => {
    const { log, lines } = keeping();
    let t = 1_000_000;
    const write = kafkaLogCreator(log, () => t)(logLevel.WARN);
    for (let i = 0; i < 20; i++) {
      for (const groupId of ['sms-workers', 'core-statuses', 'campaign-fanout']) {
        write({
          ...entry(logLevel.ERROR, 'Crash: KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED 127.0.0.1:19092', { groupId }),
          namespace: 'Consumer',
        });
        write({ ...entry(logLevel.ERROR, 'Restarting the consumer in 10802ms', { groupId, retryTime: 10802 }), namespace: 'Consumer' });
      }
      write(entry(logLevel.ERROR, 'Connection error: connect ECONNREFUSED 127.0.0.1:19092', { broker: '127.0.0.1:19092' }));
      t += 1_000;
    }
    expect(lines.filter((l) => l.level === 'error' || l.level === 'warn').map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'warn']);
    expect(lines.filter((l) => l.msg.startsWith('Restarting')).every((l) => l.level === 'info')).toBe(true);
  });

  it('writes kafkajs lines through hermod’s logger with their namespace, at their own level', () => {
    const { log, lines } = keeping();
    const write = kafkaLogCreator(log)(logLevel.WARN);
    write(entry(logLevel.WARN, 'Connection timeout', { broker: 'kafka-1:9092' }));
    write(entry(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', { error: 'Not leader for partition', broker: 'kafka-1:9092' }));
    expect(lines).toEqual([
      { level: 'warn', msg: 'Connection timeout', fields: { kafka: 'Connection', broker: 'kafka-1:9092' } },
      {
        level: 'error',
        msg: 'Response Produce(key: 0, version: 7)',
        fields: { kafka: 'Connection', error: 'Not leader for partition', broker: 'kafka-1:9092' },
      },
    ]);
  });

  it('tells a topic that another process made first as a debug line, not an error, on every clean start', () => {
    const { log, lines } = keeping();
    kafkaLogCreator(log)(logLevel.WARN)(
      entry(logLevel.ERROR, 'Response CreateTopics(key: 19, version: 3)', { error: 'Topic creation errors', correlationId: 4 }),
    );
    expect(lines.map((l) => l.level)).toEqual(['debug']);
  });

  it('tells transient answers kafkajs retries (a leader elected or moved) and a consumer crash and restart after one as info, other retriable answers and a consumer crash on an unreachable broker as warnings, and a broker’s own failure as an error', () => {
    const { log, lines } = keeping();
    const write = kafkaLogCreator(log)(logLevel.WARN);
    write(
      entry(logLevel.ERROR, "Crash: KafkaJSNumberOfRetriesExceeded: The coordinator is loading and hence can't process requests for this group", {
        groupId: 'sms-workers',
        stack: 'KafkaJSNumberOfRetriesExceeded: …\n    at …',
      }),
    );
    write(entry(logLevel.ERROR, 'Restarting the consumer in 300ms', { groupId: 'sms-workers', retryTime: 300 }));
    write(entry(logLevel.ERROR, 'Crash: KafkaJSConnectionError: Connection error: connect ECONNREFUSED 127.0.0.1:9092', { groupId: 'sms-workers' }));
    write(entry(logLevel.ERROR, 'Restarting the consumer in 300ms', { groupId: 'sms-workers', retryTime: 300 }));
    write(
      entry(logLevel.ERROR, 'Response Metadata(key: 3, version: 6)', {
        error: 'There is no leader for this topic-partition as we are in the middle of a leadership election',
      }),
    );
    write(entry(logLevel.ERROR, 'Response ListOffsets(key: 2, version: 3)', { error: 'This server is not the leader for that topic-partition' }));
    write(entry(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', { error: 'The request timed out' }));
    write(entry(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', { error: 'The server experienced an unexpected error when processing the request' }));
    // Retriable by the protocol, but a broker's disk or data going bad.
    write(entry(logLevel.ERROR, 'Response Fetch(key: 1, version: 11)', { error: 'Disk error when trying to access log file on the disk' }));
    write(
      entry(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', {
        error: 'This message has failed its CRC checksum, exceeds the valid size, or is otherwise corrupt',
      }),
    );
    expect(lines.map((l) => l.level)).toEqual(['info', 'info', 'warn', 'info', 'info', 'info', 'warn', 'error', 'error', 'error']);
    expect(lines[0]!.fields).not.toHaveProperty('stack');
  });

  it('tells a coordinator not available yet or still loading, as every Kafka start answers, as debug lines, and a consumer that crashed on it as info', () => {
    const { log, lines } = keeping();
    const write = kafkaLogCreator(log)(logLevel.WARN);
    write(entry(logLevel.ERROR, 'Response GroupCoordinator(key: 10, version: 2)', { error: 'The group coordinator is not available', correlationId: 2 }));
    write(
      entry(logLevel.ERROR, 'Response InitProducerId(key: 22, version: 1)', {
        error: "The coordinator is loading and hence can't process requests for this group",
        correlationId: 3,
      }),
    );
    // A coordinator that moved to another broker (one failing) is still worth an operator's eye.
    write(entry(logLevel.ERROR, 'Response JoinGroup(key: 11, version: 5)', { error: 'This is not the correct coordinator for this group', correlationId: 4 }));
    write(
      entry(logLevel.ERROR, "Crash: KafkaJSNumberOfRetriesExceeded: The coordinator is loading and hence can't process requests for this group", {
        groupId: 'sms-workers',
      }),
    );
    write(
      entry(logLevel.ERROR, 'Response Produce(key: 0, version: 7)', {
        error: 'The producer attempted to use a producer id which is not currently assigned to its transactional id',
      }),
    );
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'Response GroupCoordinator(key: 10, version: 2)'],
      ['debug', 'Response InitProducerId(key: 22, version: 1)'],
      ['info', 'Response JoinGroup(key: 11, version: 5)'],
      ['info', "Crash: KafkaJSNumberOfRetriesExceeded: The coordinator is loading and hence can't process requests for this group"],
      ['error', 'Response Produce(key: 0, version: 7)'],
    ]);
  });
});
