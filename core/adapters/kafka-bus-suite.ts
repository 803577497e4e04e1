import net from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../../lib/config';
import { HermodError } from '../../lib/errors';
import { type KAFKA_VERSIONS, kafkaUnavailableReason, startKafkaCluster, type KafkaCluster } from '../../test/support/kafka-cluster';
import { startKafkaMemberProcess } from '../../test/support/kafka-member-process';
import { type Bus, type DeliveredRecord, valueBytes } from '../ports/bus';
import { describeBusContract } from './bus-contract';
import { describeBusTraceContract } from './bus-trace-contract';
import { eventually } from '../../test/support/eventually';
import { unique } from './contract-support';
import { createKafkaBus, type KafkaBusOptions } from './kafka-bus';
import { openBus } from './open-adapters';
import { enginesRequired } from '../../test/support/engines-required';
import { freePort } from '../../test/support/free-port';

// A real broker per supported Kafka line, started from Maven Central jars. Without java or mvn
// the suite skips with the reason, except in CI, where a skipped Kafka suite would hide a regression.
const unavailable = kafkaUnavailableReason();

const WORLD_TEXT = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'];

/** The Kafka bus suite against one broker of `version`; one test file per version, so the two run side by side. */
export function describeKafkaBusSuite(version: (typeof KAFKA_VERSIONS)[number]): void {
  if (unavailable && !enginesRequired) {
    console.warn(`Kafka bus tests skipped: ${unavailable}`);
    describe('Bus contract: Kafka', () => {
      it.skip(`runs against real Kafka brokers; skipped here because ${unavailable}`, () => undefined);
    });
  } else {
    // A member's close waits for its in-flight batch and its group's rebalance: more than the 10 s hook default.
    vi.setConfig({ hookTimeout: 60_000 });
    // A cold broker and the group rebalances of kafkajs take seconds, not milliseconds.
    describe(`Kafka ${version}`, { timeout: 120_000 }, () => {
      let cluster: KafkaCluster | undefined;
      beforeAll(async () => {
        if (unavailable) throw new Error(`CI must run the Kafka tests, but ${unavailable}`);
        cluster = await startKafkaCluster({ version });
      }, 15 * 60_000);
      afterAll(async () => {
        await cluster?.stop();
      }, 60_000);

      describeBusContract(
        `Kafka ${version} (kafkajs)`,
        () => createKafkaBus({ brokers: cluster!.brokers, partitions: 4, replicationFactor: 1, retryBackoffMs: 50 }),
        { timeoutMs: 60_000, settleMs: 3_000 },
      );
      describeBusTraceContract(
        `Kafka ${version} (kafkajs)`,
        () => createKafkaBus({ brokers: cluster!.brokers, partitions: 4, replicationFactor: 1, retryBackoffMs: 50 }),
        { timeoutMs: 60_000, settleMs: 3_000 },
      );

      describe('Kafka bus', () => {
        const buses: Bus[] = [];
        const open = (extra: Partial<KafkaBusOptions> = {}): Bus => {
          const bus = createKafkaBus({ brokers: cluster!.brokers, partitions: 2, replicationFactor: 1, retryBackoffMs: 50, ...extra });
          buses.push(bus);
          return bus;
        };
        afterEach(async () => {
          for (const bus of buses.splice(0)) await bus.close();
        });

        it('keeps a handler’s partitions while it waits longer than the session timeout, so its batch is handled once', async () => {
          // 6 s is the broker's smallest session timeout; without heartbeats the member is expelled
          // mid-handler, its commit is refused and the batch comes back as a redelivery.
          const bus = open({ sessionTimeoutMs: 6_000 });
          const topic = unique('slow-handler');
          const group = unique('group');
          const calls: DeliveredRecord[][] = [];
          await bus.subscribe(
            topic,
            async (records) => {
              calls.push(records);
              // Well past the session timeout (by 4 s, the broker's own margin), not a long margin more.
              if (calls.length === 1) await new Promise((r) => setTimeout(r, 10_000));
            },
            { group },
          );
          await bus.publish(
            topic,
            WORLD_TEXT.map((text) => ({ key: '+64211234567', value: Buffer.from(text) })),
          );
          await eventually(() => calls.length >= 1, 60_000);
          let lag = -1;
          for (const deadline = Date.now() + 60_000; Date.now() < deadline && (lag = await bus.lag(topic, group)) !== 0; )
            await new Promise((r) => setTimeout(r, 200));
          expect(lag).toBe(0);
          expect(calls.flat().map((r) => r.redeliveries)).toEqual(WORLD_TEXT.map(() => 0));
          expect(calls.flat().map((r) => valueBytes(r.value).toString('utf8'))).toEqual(WORLD_TEXT);
          expect(calls.flat().every((r) => r.key === '+64211234567')).toBe(true);
        }, 120_000);

        it('counts a redelivery when a member is killed mid-batch and another takes the partition over', async () => {
          const topic = unique('killed-member');
          const group = unique('group');
          // The first member runs in its own process and is killed there: its lease commit is all
          // the next owner learns about the batch it held.
          const doomed = await startKafkaMemberProcess({ brokers: cluster!.brokers, topic, group, sessionTimeoutMs: 6_000 });
          try {
            await open({ partitions: 1 }).publish(topic, [{ key: 'k', value: Buffer.from('Привет') }]);
            await eventually(() => doomed.held.length === 1, 60_000);
          } finally {
            await doomed.kill();
          }

          const survivor = open({ partitions: 1, sessionTimeoutMs: 6_000 });
          const got: DeliveredRecord[] = [];
          await survivor.subscribe(
            topic,
            async (records) => {
              got.push(...records);
            },
            { group },
          );
          await eventually(() => got.length >= 1, 90_000);
          expect(valueBytes(got[0]!.value).toString('utf8')).toBe('Привет');
          expect(got[0]!.redeliveries).toBe(1);
        }, 150_000);

        it('hands a partition’s next batches beside one whose handler is slow, with inFlight, and commits only past batches ended in a row', async () => {
          const bus = open({ partitions: 1 });
          const topic = unique('side-by-side');
          const group = unique('group');
          let release!: () => void;
          const slow = new Promise<void>((resolve) => (release = resolve));
          const handled: string[] = [];
          await bus.subscribe(
            topic,
            async (records) => {
              if (records.some((r) => valueBytes(r.value).toString('utf8') === 'pōturi 🐢')) await slow;
              handled.push(...records.map((r) => valueBytes(r.value).toString('utf8')));
            },
            { group, maxBatch: 1, inFlight: 3 },
          );
          await bus.publish(topic, [{ key: 'a', value: Buffer.from('pōturi 🐢') }]);
          await bus.publish(
            topic,
            ['tere 1 你好', 'tere 2 👋🏽', 'tere 3 mā'].map((text) => ({ key: text, value: Buffer.from(text) })),
          );
          // Two beside the slow one at once (inFlight 3), the third as soon as one of them ended.
          await eventually(() => handled.length === 3, 60_000);
          expect(handled).toEqual(['tere 1 你好', 'tere 2 👋🏽', 'tere 3 mā']);
          // Nothing ended in a row yet: the slow one is the partition's position.
          expect(await bus.lag(topic, group)).toBe(4);
          release();
          await eventually(async () => handled.length === 4 && (await bus.lag(topic, group)) === 0, 60_000);
        }, 120_000);

        it('hands out again, each counted, every batch a member killed with batches side by side had not ended in a row, and nothing before them', async () => {
          const topic = unique('killed-side-by-side');
          const group = unique('group');
          const texts = ['tere 0', 'pōturi 1', 'tere 2', 'pōturi 3', 'tere 4'];
          const doomed = await startKafkaMemberProcess({
            brokers: cluster!.brokers,
            topic,
            group,
            sessionTimeoutMs: 6_000,
            inFlight: 3,
            maxBatch: 1,
            ending: 'tere',
          });
          try {
            await open({ partitions: 1 }).publish(
              topic,
              texts.map((text) => ({ key: text, value: Buffer.from(text) })),
            );
            // 'tere 0' ends at once; 'pōturi 1', 'tere 2' (ended), 'pōturi 3' and 'tere 4' (ended) are handed out beside one another.
            await eventually(() => doomed.held.length === 5, 60_000);
          } finally {
            await doomed.kill();
          }
          const got: DeliveredRecord[] = [];
          await open({ partitions: 1, sessionTimeoutMs: 6_000 }).subscribe(topic, async (records) => void got.push(...records), { group, inFlight: 3 });
          await eventually(() => got.length >= 4, 90_000);
          await new Promise((r) => setTimeout(r, 1_000));
          expect(got.map((r) => valueBytes(r.value).toString('utf8'))).toEqual(['pōturi 1', 'tere 2', 'pōturi 3', 'tere 4']);
          expect(got.map((r) => r.redeliveries)).toEqual([1, 1, 1, 1]);
        }, 150_000);

        it('reports no lag for a topic that does not exist', async () => {
          expect(await open().lag(unique('no-such-topic'), unique('group'))).toBe(0);
        });

        it('with HERMOD_KAFKA_CREATE_TOPICS=false, refuses to publish to a topic no operator created, as a not_found HermodError', async () => {
          const config = resolveConfig({ HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: cluster!.brokers.join(','), HERMOD_KAFKA_CREATE_TOPICS: 'false' });
          expect(config.adapters.kafkaCreateTopics).toBe(false);
          const bus = await openBus(config.adapters);
          buses.push(bus);
          const topic = unique('operator-owned');
          const err = await bus.publish(topic, [{ key: 'k', value: Buffer.from('你好世界') }]).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(HermodError);
          expect((err as HermodError).code).toBe('not_found');
          const admin = new Kafka({ brokers: cluster!.brokers, logLevel: logLevel.NOTHING }).admin();
          await admin.connect();
          try {
            expect(await admin.listTopics()).not.toContain(topic);
          } finally {
            await admin.disconnect();
          }
        }, 120_000);

        // Hermod's own retry, not the broker's behaviour: on one version only (it waits past kafkajs's ~10 s of retries).
        it.runIf(version === '4.4.0')(
          'subscribes once the cluster answers, however long after it was asked: a core started before its broker waits for it',
          async () => {
            // The broker is reached through a port nothing listens on yet (a broker still starting), then through a relay to it.
            const relayPort = await freePort();
            const bus = open({ brokers: [`127.0.0.1:${relayPort}`] });
            const topic = unique('broker-late');
            const got: string[] = [];
            let subscribed = false;
            const subscribing = bus
              .subscribe(topic, async (records) => void got.push(...records.map((r) => valueBytes(r.value).toString('utf8'))), { group: unique('late') })
              .then((sub) => {
                subscribed = true;
                return sub;
              });
            // Longer than kafkajs's own retries of a connection (some 10 s), after which a subscribe used to fail.
            await new Promise((r) => setTimeout(r, 12_000));
            expect(subscribed).toBe(false);
            const [host, port] = cluster!.brokers[0]!.split(':');
            const relay = net.createServer((client) => {
              const broker = net.connect(Number(port), host);
              client.pipe(broker).pipe(client);
              client.on('error', () => broker.destroy());
              broker.on('error', () => client.destroy());
            });
            await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve));
            try {
              const sub = await subscribing;
              await bus.publish(topic, [{ key: 'k', value: Buffer.from(WORLD_TEXT[0]!) }]);
              await eventually(() => got.length === 1, 60_000);
              expect(got).toEqual([WORLD_TEXT[0]]);
              await sub.close();
            } finally {
              relay.close();
            }
          },
          120_000,
        );

        // No broker is involved (kafkajs's retries against localhost:1, some 10 s): on one version only (the other file has the late-broker test), as the same client runs both.
        it.runIf(version === '3.9.2')(
          'turns an unreachable cluster into a retryable unavailable HermodError',
          async () => {
            const bus = createKafkaBus({ brokers: ['localhost:1'], partitions: 1 });
            const err = await bus.publish(unique('nowhere'), [{ key: 'k', value: Buffer.from('👋🏽🎉') }]).catch((e: unknown) => e);
            expect(err).toBeInstanceOf(HermodError);
            expect((err as HermodError).code).toBe('unavailable');
            expect((err as HermodError).retryable).toBe(true);
            await bus.close().catch(() => undefined);
          },
          120_000,
        );
      });
    });
  }
}
