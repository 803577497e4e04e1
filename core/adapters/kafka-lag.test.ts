import kafkajs, { type Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLagReader } from './kafka-lag';

const { KafkaJSProtocolError } = kafkajs;

const refusal = (type: string, code: number) => new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable: true } as unknown as Error);

/** A cluster of one topic of two partitions, holding 7 records, whose brokers refuse as `refusals` say, one admin client each. */
function clusterRefusing(refusals: { offsets?: Error[]; commits?: Error[] }) {
  let admins = 0;
  let disconnected = 0;
  const kafka = {
    admin: () => {
      admins += 1;
      return {
        connect: async () => undefined,
        disconnect: async () => void (disconnected += 1),
        listTopics: async () => ['hermod.sms.v1'],
        fetchTopicOffsets: async () => {
          const err = refusals.offsets?.shift();
          if (err) throw err;
          return [
            { partition: 0, offset: '5', high: '5', low: '0' },
            { partition: 1, offset: '4', high: '4', low: '2' },
          ];
        },
        fetchOffsets: async () => {
          const err = refusals.commits?.shift();
          if (err) throw err;
          return [
            {
              topic: 'hermod.sms.v1',
              partitions: [
                { partition: 0, offset: '-1' },
                { partition: 1, offset: '3' },
              ],
            },
          ];
        },
      };
    },
  } as unknown as Kafka;
  return { kafka, admins: () => admins, disconnected: () => disconnected };
}

describe('Kafka lag reader', () => {
  it('asks afresh, with new metadata, when a partition’s leader was not where the broker last said', async () => {
    const c = clusterRefusing({ offsets: [refusal('NOT_LEADER_FOR_PARTITION', 6), refusal('LEADER_NOT_AVAILABLE', 5)] });
    const reader = createLagReader(c.kafka);
    // Partition 0: nothing committed, 5 retained from 0; partition 1: committed 3 of 4.
    expect(await reader.lag('hermod.sms.v1', 'sms-workers', true)).toBe(6);
    expect(c.admins()).toBe(3);
    expect(c.disconnected()).toBe(2);
  });

  it('asks again when the group’s coordinator moved or is loading', async () => {
    const c = clusterRefusing({ commits: [refusal('NOT_COORDINATOR_FOR_GROUP', 16), refusal('GROUP_LOAD_IN_PROGRESS', 14)] });
    expect(await createLagReader(c.kafka).lag('hermod.sms.v1', 'sms-workers', true)).toBe(6);
  });

  it('gives up after a couple of seconds of the same refusal, and at once on one that will not pass', async () => {
    const stuck = clusterRefusing({ offsets: Array.from({ length: 20 }, () => refusal('NOT_LEADER_FOR_PARTITION', 6)) });
    await expect(createLagReader(stuck.kafka).lag('hermod.sms.v1', 'sms-workers', true)).rejects.toThrow('NOT_LEADER_FOR_PARTITION');
    expect(stuck.admins()).toBeLessThanOrEqual(8);
    const denied = clusterRefusing({ commits: [refusal('GROUP_AUTHORIZATION_FAILED', 30)] });
    await expect(createLagReader(denied.kafka).lag('hermod.sms.v1', 'sms-workers', true)).rejects.toThrow('GROUP_AUTHORIZATION_FAILED');
    expect(denied.admins()).toBe(1);
  });
});
