import kafkajs, { type Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createLagReader } from './kafka-lag';

const { KafkaJSProtocolError } = kafkajs;

const refusal = (type: string, code: number) => new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable: true } as unknown as Error);

/**
 * A cluster of one topic of two partitions, holding 7 records, whose brokers refuse as `refusals` say, one
 * admin client each, each answering only while connected (as kafkajs's: "Not connected" once disconnected).
 */
function clusterRefusing(refusals: { offsets?: Error[]; commits?: Error[] }, answerAfterMs = 0) {
  let admins = 0;
  let disconnected = 0;
  const wait = () => new Promise((r) => setTimeout(r, answerAfterMs));
  const kafka = {
    admin: () => {
      admins += 1;
      let connected = false;
      const connectedOnly = () => {
        if (!connected) throw new Error('Not connected');
      };
      return {
        connect: async () => void (connected = true),
        disconnect: async () => {
          if (connected) disconnected += 1;
          connected = false;
        },
        listTopics: async () => ['hermod.sms.v1'],
        fetchTopicOffsets: async () => {
          await wait();
          connectedOnly();
          const err = refusals.offsets?.shift();
          if (err) throw err;
          return [
            { partition: 0, offset: '5', high: '5', low: '0' },
            { partition: 1, offset: '4', high: '4', low: '2' },
          ];
        },
        fetchOffsets: async () => {
          await wait();
          connectedOnly();
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
  return { kafka, admins: () => admins, disconnected: () => disconnected, connected: () => admins - disconnected };
}

describe('Kafka lag reader', () => {
  it('asks afresh, with new metadata, when a partition’s leader was not where the broker last said', async () => {
    const c = clusterRefusing({ offsets: [refusal('NOT_LEADER_FOR_PARTITION', 6), refusal('LEADER_NOT_AVAILABLE', 5)] });
    const reader = createLagReader(c.kafka);
    // Partition 0: nothing committed, 5 retained from 0; partition 1: committed 3 of 4.
    expect(await reader.lag('hermod.sms.v1', 'sms-workers', true)).toBe(6);
    expect(c.admins()).toBe(3);
    await new Promise((r) => setTimeout(r, 10));
    expect(c.disconnected()).toBe(2);
  });

  it('lets the other groups’ readings of the same moment finish on the admin one of them found stale', async () => {
    // The backlog gauge reads every group at once; one reading's stale leader must not cut the others' connection.
    const c = clusterRefusing({ offsets: [refusal('NOT_LEADER_FOR_PARTITION', 6)] }, 20);
    const reader = createLagReader(c.kafka);
    const groups = ['sms-workers', 'email-workers', 'status', 'callbacks'];
    expect(await Promise.all(groups.map((g) => reader.lag('hermod.sms.v1', g, true)))).toEqual([6, 6, 6, 6]);
    await reader.close();
    expect(c.connected()).toBe(0);
  });

  it('leaves no admin connected when closed while a reading waits to try again', async () => {
    const c = clusterRefusing({ offsets: [refusal('NOT_LEADER_FOR_PARTITION', 6)] });
    const reader = createLagReader(c.kafka);
    const reading = reader.lag('hermod.sms.v1', 'sms-workers', true).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 100));
    await reader.close();
    expect(await reading).toMatchObject({ code: 'unavailable' });
    await new Promise((r) => setTimeout(r, 10));
    expect(c.connected()).toBe(0);
  });

  it('asks again when the group’s coordinator moved or is loading', async () => {
    const c = clusterRefusing({ commits: [refusal('NOT_COORDINATOR_FOR_GROUP', 16), refusal('GROUP_LOAD_IN_PROGRESS', 14)] });
    expect(await createLagReader(c.kafka).lag('hermod.sms.v1', 'sms-workers', true)).toBe(6);
  });

  it('gives up within 3 s of the same refusal, and at once on one that will not pass', async () => {
    const stuck = clusterRefusing({ offsets: Array.from({ length: 20 }, () => refusal('NOT_LEADER_FOR_PARTITION', 6)) }, 200);
    const started = Date.now();
    await expect(createLagReader(stuck.kafka).lag('hermod.sms.v1', 'sms-workers', true)).rejects.toThrow('NOT_LEADER_FOR_PARTITION');
    expect(Date.now() - started).toBeLessThan(3_500);
    expect(stuck.admins()).toBeLessThanOrEqual(8);
    const denied = clusterRefusing({ commits: [refusal('GROUP_AUTHORIZATION_FAILED', 30)] });
    await expect(createLagReader(denied.kafka).lag('hermod.sms.v1', 'sms-workers', true)).rejects.toThrow('GROUP_AUTHORIZATION_FAILED');
    expect(denied.admins()).toBe(1);
  });
});
