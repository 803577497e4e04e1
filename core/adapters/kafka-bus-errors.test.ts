import kafkajs from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { toKafkaBusError } from './kafka-bus-errors';

const { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } = kafkajs;

describe('Kafka failures as hermod errors', () => {
  it('keeps a broker that kafkajs gave up reaching retryable: it is the cluster that is away, and what must not be dropped is tried again', () => {
    const gaveUp = new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:31092'), {
      retryCount: 5,
      retryTime: 3000,
    });
    expect(gaveUp.retriable).toBe(false);
    const err = toKafkaBusError(gaveUp, 'publishing to hermod.callbacks.v1');
    expect(err).toMatchObject({ code: 'unavailable', retryable: true });
    expect(err.message).toBe('Kafka publishing to hermod.callbacks.v1 failed: Connection error: connect ECONNREFUSED 127.0.0.1:31092');
  });

  it('names what the bus was doing when kafkajs fails with an error of its own, so the log line says it was Kafka', () => {
    // What kafkajs 2.2.4's fetchTopicOffsets threw at core's start beside new topics.
    const bug = new TypeError("Cannot destructure property 'partitions' of 'low.pop(...)' as it is undefined");
    const err = toKafkaBusError(bug, 'reading the lag of group sms-workers on hermod.sms.v1');
    expect(err).toMatchObject({ code: 'internal', cause: bug });
    expect(err.message).toBe(
      "Kafka reading the lag of group sms-workers on hermod.sms.v1 failed: Cannot destructure property 'partitions' of 'low.pop(...)' as it is undefined",
    );
  });

  it('keeps a refusal that will not pass not retryable', () => {
    const tooLarge = toKafkaBusError(
      new KafkaJSProtocolError({
        type: 'MESSAGE_TOO_LARGE',
        code: 10,
        retriable: false,
        message: 'The request included a message larger than the max message size the server will accept',
      } as unknown as Error),
      'publishing to hermod.sms.v1',
    );
    expect(tooLarge).toMatchObject({ code: 'body_too_large', retryable: false });
  });
});
