import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginesRequired } from '../support/engines-required';
import { expectImEmailAndWhatsAppFinal } from '../support/im-final-statuses';
import { eventually } from '../support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from '../support/hermod-with-channels';
import { createClient, type Client } from '../support/https-client';
import { KAFKA_VERSIONS, kafkaUnavailableReason, startKafkaCluster, type KafkaCluster } from '../support/kafka-cluster';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from '../support/redis-keys';

// `hermod start` as a user runs it on Kafka: the supervisor's gateway, core and two worker
// processes on one broker of the newest supported Kafka, hot state in Redis under a prefix of its own.
const unavailable = kafkaUnavailableReason();
const NEWEST = KAFKA_VERSIONS.at(-1)!;
const GRACE_MS = 10_000;
const TEXT = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好世界';
const MAX_RECORD_BYTES = 4096;

if (unavailable && !enginesRequired) {
  console.warn(`hermod start on Kafka skipped: ${unavailable}`);
  describe('hermod start on the Kafka bus', () => {
    it.skip(`runs against a real Kafka broker; skipped here because ${unavailable}`, () => undefined);
  });
} else {
  describe(`hermod start on the Kafka ${NEWEST} bus and Redis state`, () => {
    let cluster: KafkaCluster | undefined;
    let h: HermodWithChannels | undefined;
    let basic: Client | undefined;
    const prefix = randomPrefix('start-kafka');
    const atCarrier: string[] = [];

    beforeAll(async () => {
      if (unavailable) throw new Error(`this run must include the Kafka tests, but ${unavailable}`);
      // Far smaller than Kafka's 1 MB default (as some managed brokers are set), so that one long SMS is more than the broker takes.
      cluster = await startKafkaCluster({ version: NEWEST, properties: { 'message.max.bytes': String(MAX_RECORD_BYTES) } });
      h = await startHermodWithChannels('start-kafka', {
        env: {
          HERMOD_BUS: 'kafka',
          HERMOD_KAFKA_BROKERS: cluster.brokers.join(','),
          HERMOD_STATE: 'redis',
          HERMOD_REDIS_URL: REDIS_URL,
          HERMOD_REDIS_PREFIX: prefix,
          HERMOD_BUS_PARTITIONS: '4',
        },
      });
      h.smsc.on('message', (m: { text: string }) => atCarrier.push(m.text));
      basic = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'acme', pass: 'secret' });
    }, 15 * 60_000);

    afterAll(async () => {
      basic?.close();
      await h?.stop();
      await cluster?.stop();
      await deleteRedisKeys(prefix);
    }, 120_000);

    it('delivers an SMS sent through v2 all the way to received, with its text intact', async () => {
      const sent = await basic!.post('/rest/sms/v2/messages', { destination: '+6421000301', content: TEXT });
      expect(sent.status, sent.text).toBe(202);
      const done = await eventually(
        async () => {
          const r = await basic!.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
          return r.json?.status === 'received' ? r : undefined;
        },
        60_000,
        200,
      );
      expect(done.json).toMatchObject({ id: sent.json.id, status: 'received', content: TEXT });
      expect(atCarrier).toContain(TEXT);
    }, 90_000);

    it('runs the SMS workers in a process of their own and the quieter channels together in one more', () => {
      const running = h!.hermod
        .output()
        .split('\n')
        .map((line) => (line.startsWith('{') ? JSON.parse(line) : {}))
        .find((l) => l.msg === 'hermod is running');
      expect(running.workers).toEqual(['sms', 'email,wab,rcs,mms']);
    });

    it('starts on a fresh broker without an error line, kafkajs’s own lines written in hermod’s format', () => {
      const lines = h!.hermod.output().split('\n');
      expect(lines.filter((l) => l.includes('"logger":"kafkajs"'))).toEqual([]);
      expect(lines.filter((l) => /"level":"(error|ERROR)"/.test(l))).toEqual([]);
    });

    it('carries an Intelligent Messaging e-mail and a WhatsApp message to a final status', async () => {
      await expectImEmailAndWhatsAppFinal(h!, '+6421100301');
    }, 90_000);

    it('rejects a message the broker refuses as too large, with the reason, instead of leaving it queued', async () => {
      // v2's longest content, 1,600 characters: about 4.8 KB of UTF-8 on the bus, over the broker's 4 KB.
      const long = `Tēnā koutou katoa ${'你好世界'.repeat(400)}`.slice(0, 1600);
      const sent = await basic!.post('/rest/sms/v2/messages', { destination: '+6421000302', content: long });
      expect(sent.status, sent.text).toBe(202);
      const ended = await eventually(
        async () => {
          const r = await basic!.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
          return r.json?.status === 'rejected' ? r : undefined;
        },
        30_000,
        200,
      );
      expect(ended.json).toMatchObject({ id: sent.json.id, status: 'rejected' });
      expect(atCarrier).not.toContain(long);
      expect(h!.hermod.output()).toContain('a message is too large for its channel’s message bus; it is rejected');
      // The short messages around it still go through.
      const after = await basic!.post('/rest/sms/v2/messages', { destination: '+6421000303', content: 'Ka kite anō 👋🏽' });
      await eventually(
        async () => ((await basic!.get(`/rest/sms/v2/messages?id=${after.json.id}`)).json?.status === 'received' ? true : undefined),
        30_000,
        200,
      );
    }, 90_000);

    it('stops on SIGTERM within one shutdown grace period, every process finishing its own stop, core included', async () => {
      const asked = Date.now();
      const code = await h!.hermod.stop();
      const took = Date.now() - asked;
      const lines = h!.hermod.output().split('\n');
      const after = lines.slice(lines.findIndex((l) => l.includes('"msg":"stopping hermod"'))).filter((l) => l.startsWith('{"time"'));
      expect(
        after.filter((l) => l.includes('"level":"error"')),
        after.join('\n'),
      ).toEqual([]);
      expect(
        after.some((l) => l.includes('"msg":"core stopped"')),
        after.join('\n'),
      ).toBe(true);
      expect(code).toBe(0);
      // HERMOD_SHUTDOWN_GRACE (10 s) is what one process may take before it is cut short; on Redis the whole stop takes well under 1 s.
      expect(took, after.join('\n')).toBeLessThan(GRACE_MS);
    }, 60_000);
  });
}
