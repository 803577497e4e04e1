import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisBus } from '../core/adapters/redis-bus';
import { leaseKey, streamKey } from '../core/adapters/redis-bus-keys';
import { setLogLevel } from '../lib/log';
import { eventually } from './support/eventually';
import { startRedisDeployment } from './support/redis-deployment';

// The hung callback senders of this process say nothing of their dead connections.
setLogLevel('error');

const ROOT = path.resolve(import.meta.dirname, '..');
const PREFIX = 'kōrero';
const TOPIC = 'hermod.callbacks.v1';

/** A callback job as it is on the callbacks topic: the part the receiver is to see. */
interface Published {
  eventId: string;
  messageId: string;
  status: string;
}

/**
 * The Redis bus on a Redis without persistence, which comes back empty while status callbacks are on its stream
 * and no core has taken them yet: every one must still reach its receiver.
 */
describe('core, when the Redis bus comes back empty holding status callbacks no core has taken', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
  });

  /**
   * A Redis of its own, an SMSC simulator, a receiver on an address rather than a host name, and callback senders of
   * two other cores that hang: they take the callback records and never acknowledge them. They join first, so they
   * hold both partitions of the callbacks topic and core's sender gets none. Their connections do not come back
   * after Redis goes: those cores are gone with it. Then core, an SMS worker and a gateway, and messages that end
   * `received`, whose status callbacks are all on the stream, none taken.
   */
  async function callbacksOnTheStream(dataDirPrefix: string) {
    const d = await startRedisDeployment({
      receiptDelayMs: 10,
      dataDirPrefix,
      env: { HERMOD_REDIS_PREFIX: PREFIX, HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' },
      cleanup,
    });
    const { redisPort, env, role } = d;

    const calls: { eventId: string; json: Record<string, unknown> }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        calls.push({ eventId: String(req.headers['x-hermod-event-id']), json: JSON.parse(body) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanup.push(() => {
      receiver.closeAllConnections();
      return new Promise((r) => receiver.close(r));
    });

    const hung = createRedisBus({
      redis: { host: '127.0.0.1', port: redisPort, retryStrategy: () => null },
      prefix: PREFIX,
      partitions: 2,
      // Long enough that a busy machine never lets them lapse, so core's sender never adopts their partitions.
      leaseMs: 5000,
      closeTimeoutMs: 100,
    });
    cleanup.push(() => hung.close());
    for (const consumer of ['hung-core-1', 'hung-core-2'])
      await hung.subscribe(TOPIC, () => new Promise<void>(() => undefined), { group: 'callback-senders', consumer });
    const admin = new Redis(redisPort, '127.0.0.1');
    cleanup.push(() => admin.disconnect());
    await eventually(async () => {
      const owners = await Promise.all([0, 1].map((p) => admin.get(leaseKey(streamKey(PREFIX, TOPIC, p), 'callback-senders'))));
      return owners[0] !== null && owners[1] !== null && owners[0] !== owners[1];
    }, 30_000);

    const core = await role(['core'], '"msg":"core listening"');
    await role(['worker', '--channel', 'sms'], '"msg":"channel worker started"');
    const { gateway, client } = await d.gateway(core);
    const set = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const cli = spawn(
        process.execPath,
        [
          path.join(ROOT, 'bin/hermod.js'),
          'apps',
          'set-callbacks',
          'acme',
          '--status',
          `http://127.0.0.1:${(receiver.address() as { port: number }).port}/status`,
        ],
        {
          cwd: ROOT,
          env: { ...process.env, ...env, HERMOD_CORE_ADDRESS: core.ready.grpc },
        },
      );
      let output = '';
      cli.stdout.on('data', (d: Buffer) => (output += d.toString()));
      cli.stderr.on('data', (d: Buffer) => (output += d.toString()));
      cli.on('close', (code) => resolve({ code, output }));
    });
    expect(set.code, set.output).toBe(0);

    const references = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Tēnā koe — नमस्ते 🌿'];
    const ids: string[] = [];
    for (const [i, reference] of references.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100055${i}`, content: `${reference} ${i}`, reference });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    for (const id of ids)
      await eventually(async () => ((await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status === 'received' ? true : undefined), 30_000, 100);

    const onStream = async (): Promise<Published[]> => {
      const out: Published[] = [];
      for (const p of [0, 1]) {
        for (const [, fields] of await admin.xrangeBuffer(streamKey(PREFIX, TOPIC, p), '-', '+')) {
          const v = fields[fields.findIndex((f, i) => i % 2 === 0 && f.toString() === 'v') + 1]!;
          const job = JSON.parse(v.toString('utf8'));
          out.push({ eventId: job.eventId, messageId: job.messageId, status: job.body.status });
        }
      }
      return out;
    };
    const published = await eventually(async () => {
      const all = await onStream();
      return ids.every((id) => all.some((c) => c.messageId === id && c.status === 'received')) ? all : undefined;
    }, 30_000);
    expect(calls).toEqual([]);

    return {
      core,
      gateway,
      role,
      published,
      /** Redis killed and started again on its port without its data; the hung cores' connections end with it. */
      restartRedisEmpty: async () => {
        await d.restartRedisEmpty();
        void hung.close().catch(() => undefined);
      },
      /** Resolves once the receiver has had every callback that was on the stream, each as it was published. */
      allReceived: async () => {
        await eventually(() => published.every((p) => calls.some((c) => c.eventId === p.eventId)), 60_000, 200);
        for (const p of published) {
          const call = calls.find((c) => c.eventId === p.eventId)!;
          const reference = references[ids.indexOf(p.messageId)];
          expect(call.json).toEqual({ id: p.messageId, message_id: p.messageId, status: p.status, detail: expect.any(String), reference });
        }
      },
    };
  }

  it('sends every one of them, with its event id, once Redis is back', async () => {
    const d = await callbacksOnTheStream('hermod-redis-loss-callbacks-');
    await d.restartRedisEmpty();
    await eventually(() => (d.core.output().includes('hot state lost data') ? true : undefined), 30_000);
    await d.allReceived();
  }, 180_000);

  it('sends every one of them when Redis came back empty while core was stopped', async () => {
    const d = await callbacksOnTheStream('hermod-redis-loss-callbacks-down-');
    // Stopped for an upgrade: what it published and no sender took stays in its outbox's journal.
    await d.gateway.stop();
    await d.core.stop();
    await d.restartRedisEmpty();
    const again = await d.role(['core'], '"msg":"core listening"');
    expect(again.output()).toContain('callbacks published before the restart and not yet acknowledged');
    await d.allReceived();
  }, 180_000);
});
