import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient, type Client } from './support/https-client';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { deleteRedisKeys, randomPrefix, rawRedis, REDIS_URL } from './support/redis-keys';

const API_KEY = 'callbacks-test-api-key-0123456789';
const STATUSES = ['accepted', 'queued', 'sent', 'submitted', 'received'];

/** A callback receiver (listening on 127.0.0.1, named as localhost) that records every request and answers 200, or 503 while it is "down". */
async function startReceiver() {
  const received: Received[] = [];
  const state = { down: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const answered = state.down ? 503 : 200;
      received.push({ path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body), answered, at: Date.now() });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    received,
    state,
    port,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  answered: number;
  at?: number;
}

describe('status and reply callbacks', () => {
  let hermod: HermodProcess;
  let client: Client;
  let simulator: SmscSimulator;
  let receiver: http.Server;
  let running: HermodWithSimulator;
  let secret = '';
  let failing = false;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const answered = failing ? 500 : 200;
        received.push({ path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body), answered, at: Date.now() });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;

    running = await startHermodWithSimulator('callbacks', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true', HERMOD_BOOTSTRAP_API_KEY: API_KEY });
    ({ hermod, simulator, client } = running);
    // Host names, not addresses: the connection goes to what `localhost` resolves to.
    const set = await hermod.cli([
      'apps',
      'set-callbacks',
      'acme',
      '--status',
      `http://hook:p%C4%81%24s@localhost:${port}/status`,
      '--reply',
      `http://localhost:${port}/reply`,
      '--im-status',
      `http://localhost:${port}/im`,
    ]);
    expect(set.code).toBe(0);
    secret = /signing secret: (\S+)/.exec(set.output)![1]!;
  });

  afterAll(async () => {
    await running?.stop();
    receiver?.close();
  });

  const statusesOf = (id: string) => received.filter((r) => r.path === '/status' && r.json.id === id && r.answered === 200);
  const validSignature = (r: Received): boolean => {
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-hermod-signature'])) ?? [];
    return v1 === createHmac('sha256', secret).update(`${t}.${r.body}`).digest('hex');
  };

  it('posts every status change of a message, in order, signed, with the credentials from the URL', async () => {
    const sent = await client.post('/rest/sms/v2/messages', {
      destination: '+6426000001',
      content: 'Kia ora, e hoa mā — tēnā koe 👋🏽',
      reference: 'заказ-77',
    });
    const id = sent.json.id as string;
    await eventually(async () => (statusesOf(id).some((r) => r.json.status === 'received') ? true : undefined));
    const calls = statusesOf(id);
    expect(calls.map((c) => c.json.status)).toEqual(['accepted', 'queued', 'sent', 'submitted', 'received']);
    for (const c of calls) {
      expect(c.json).toEqual({ id, message_id: id, status: c.json.status, detail: '+6426000001', reference: 'заказ-77' });
      expect(validSignature(c)).toBe(true);
      // The password pā$s, percent-encoded in the URL, sent as UTF-8 (RFC 7617).
      expect(c.headers.authorization).toBe('Basic ' + Buffer.from('hook:pā$s', 'utf8').toString('base64'));
      expect(c.headers['x-hermod-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('retries while the receiver answers 500 and delivers later with the same event ids, still in order', async () => {
    failing = true;
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6426000002', content: '你好世界 — 再试一次 🎉' });
    const id = sent.json.id as string;
    await eventually(async () => (received.filter((r) => r.json.id === id && r.answered === 500).length >= 2 ? true : undefined));
    failing = false;
    await eventually(async () => (statusesOf(id).some((r) => r.json.status === 'received') ? true : undefined), 30_000);
    const failedIds = new Set(received.filter((r) => r.json.id === id && r.answered === 500).map((r) => r.headers['x-hermod-event-id']));
    const deliveredIds = new Set(statusesOf(id).map((r) => r.headers['x-hermod-event-id']));
    for (const e of failedIds) expect(deliveredIds.has(e)).toBe(true);
    expect(statusesOf(id).map((c) => c.json.status)).toEqual(['accepted', 'queued', 'sent', 'submitted', 'received']);
    // Each says when its status happened, the same at every try: the accepted told late is still the time it was accepted.
    const eventTime = (r: Received) => Date.parse(String(r.headers['x-hermod-event-time']));
    const firstTry = received.find((r) => r.json.id === id && r.answered === 500)!;
    const delivered = statusesOf(id).find((r) => r.headers['x-hermod-event-id'] === firstTry.headers['x-hermod-event-id'])!;
    expect(String(delivered.headers['x-hermod-event-time'])).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(eventTime(delivered)).toBe(eventTime(firstTry));
    expect(eventTime(delivered)).toBeLessThanOrEqual(firstTry.at ?? Date.now());
    expect(delivered.at! - eventTime(delivered)).toBeGreaterThan(500);
    const times = statusesOf(id).map(eventTime);
    expect(times).toEqual([...times].sort((a, b) => a - b));

    // The operator's log says why, once for the minute however many tries failed, and when the receiver answers again; never the credentials or the body.
    const port = (receiver.address() as { port: number }).port;
    const lines = await eventually(async () => {
      const all = hermod
        .output()
        .split('\n')
        .filter((l) => l.includes('"callback'));
      return all.some((l) => l.includes('callback receiver answers again')) ? all : undefined;
    });
    const failed = lines.filter((l) => l.includes('callback try failed')).map((l) => JSON.parse(l));
    expect(failed).toEqual([
      expect.objectContaining({ level: 'warn', receiver: `http://localhost:${port}`, reason: 'callback receiver answered 500', failures: 1 }),
    ]);
    const again = lines.filter((l) => l.includes('callback receiver answers again')).map((l) => JSON.parse(l));
    expect(again).toEqual([
      expect.objectContaining({ level: 'info', receiver: `http://localhost:${port}`, failures: received.filter((r) => r.answered === 500).length }),
    ]);
    expect(again[0].application).toBe(failed[0].application);
    for (const l of lines) expect(l).not.toMatch(/hook:|p%C4%81|pā|再试一次/);
    // `hermod status` says when its last error was, so an error long past does not read as today's.
    const status = await hermod.cli(['status']);
    expect(status.stdout).toMatch(/\nacme\t.*\tcallback receiver answered 500 \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\)\n/);
  });

  it('posts a reply to the reply callback with reply_to naming the message it answers', async () => {
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6426000003', content: 'Как всё прошло? 👋🏽' });
    await eventually(async () => (statusesOf(sent.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    await simulator.originate({ source: '+6426000003', destination: '4000', text: 'Ka pai rawa — 谢谢 🙏🏽' });
    const reply = await eventually(async () => received.find((r) => r.path === '/reply' && r.json.content === 'Ka pai rawa — 谢谢 🙏🏽'));
    expect(reply.json).toMatchObject({ id: expect.any(String), source: '+6426000003', content: 'Ka pai rawa — 谢谢 🙏🏽', reply_to: sent.json.id });
    expect(validSignature(reply)).toBe(true);
    const details = await client.get(`/rest/sms/v2/messages?id=${reply.json.id}`);
    expect(details.json).toMatchObject({ id: reply.json.id, direction: 'MO', source: '+6426000003', content: 'Ka pai rawa — 谢谢 🙏🏽' });
  });

  it('names a Gateway v1 message a reply answers by the integer id its client was given', async () => {
    const v1 = await client.post('/rest/gateway/messages', { destination: '+6426000007', content: 'Kei te pēhea koe? — 你好吗 🌿' });
    expect(v1.status, v1.text).toBe(201);
    const numericId = v1.json[0] as number;
    await eventually(async () => ((await client.get(`/rest/gateway/messages/${numericId}`)).json.status === 'received' ? true : undefined));
    await simulator.originate({ source: '6426000007', destination: '4000', text: 'Kei te pai — 很好 👍🏽' });
    const reply = await eventually(async () => received.find((r) => r.path === '/reply' && r.json.content === 'Kei te pai — 很好 👍🏽'));
    expect(reply.json).toMatchObject({ source: '6426000007', reply_to: numericId });
  });

  it('posts no status callback for a Gateway v1 send, as SPEC 6.3 has it, while a v2 send beside it gets every one', async () => {
    const v1 = await client.post('/rest/gateway/messages', { destination: '+6426000005', content: 'Tēnā koe, v1 🌿 你好' });
    expect(v1.status, v1.text).toBe(201);
    await eventually(async () => ((await client.get(`/rest/gateway/messages/${v1.json[0]}`)).json.status === 'received' ? true : undefined));
    const v2 = await client.post('/rest/sms/v2/messages', { destination: '+6426000006', content: 'Tēnā koe, v2 🌿 你好' });
    await eventually(async () => (statusesOf(v2.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    expect(statusesOf(v2.json.id)).toHaveLength(5);
    expect(received.filter((r) => r.json.detail === '+6426000005')).toEqual([]);
  });

  it('posts the very next callback to a status URL an operator just changed', async () => {
    const port = (receiver.address() as { port: number }).port;
    const before = await client.post('/rest/sms/v2/messages', { destination: '+6426000007', content: 'I mua — 之前 ⏮️' });
    await eventually(async () => (statusesOf(before.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    // Longer than the dispatcher's own refresh of the settings: a stale entry would be served once more.
    await new Promise((r) => setTimeout(r, 1200));
    try {
      expect((await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${port}/status-moved`])).code).toBe(0);
      const after = await client.post('/rest/sms/v2/messages', { destination: '+6426000008', content: 'I muri — 之后 ⏭️' });
      const moved = () => received.filter((r) => r.path === '/status-moved' && r.json.id === after.json.id);
      await eventually(async () => (moved().some((r) => r.json.status === 'received') ? true : undefined));
      expect(moved().map((r) => r.json.status)).toEqual(STATUSES);
      expect(statusesOf(after.json.id)).toEqual([]);
    } finally {
      const back = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://hook:p%C4%81%24s@localhost:${port}/status`]);
      expect(back.code).toBe(0);
    }
  });

  it('posts Intelligent Messaging statuses to an IM status callback named by host name', async () => {
    const sent = await client.post(
      '/rest/im/v1/message',
      {
        destination: { mobile: '+6426000004' },
        message: { type: 'text', text: { body: 'Kia ora, e hoa mā — tēnā koe 👋🏽' } },
        delivery_attempts: [{ channel: 'sms' }],
        reference: 'tēnā-42',
      },
      { authorization: API_KEY },
    );
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json.id as string;
    const im = () => received.filter((r) => r.path === '/im' && r.json.id === id && r.answered === 200);
    await eventually(async () => (im().some((r) => r.json.status === 'received' && r.json.channel === undefined) ? true : undefined));
    // The message as a whole says accepted, then its outcome; its attempt's callbacks name the channel.
    const whole = im().filter((r) => r.json.channel === undefined);
    expect(whole.map((r) => r.json.status)).toEqual(['accepted', 'received']);
    for (const r of whole) expect(r.json).toEqual({ id, status: r.json.status, detail: 'tēnā-42' });
    for (const r of im().filter((r) => r.json.channel !== undefined)) expect(r.json).toMatchObject({ id, channel: 'sms', attempt: 1, detail: 'tēnā-42' });
    for (const r of im()) expect(validSignature(r)).toBe(true);
  });

  it('signs with the old secret beside the new one for as long as the operator keeps it, so a receiver moves over without refusing a callback', async () => {
    const signatures = (r: Received): { t: string; v1: string[] } => {
      const parts = String(r.headers['x-hermod-signature']).split(',');
      return { t: parts.find((p) => p.startsWith('t='))!.slice(2), v1: parts.filter((p) => p.startsWith('v1=')).map((p) => p.slice(3)) };
    };
    const signedBy = (r: Received, key: string): boolean => {
      const { t, v1 } = signatures(r);
      return v1.includes(createHmac('sha256', key).update(`${t}.${r.body}`).digest('hex'));
    };
    const old = secret;
    const rotated = await hermod.cli(['apps', 'set-callbacks', 'acme', '--rotate-secret', '--keep-old-secret', '24h']);
    expect(rotated.code, rotated.output).toBe(0);
    const fresh = /signing secret: (\S+)/.exec(rotated.output)![1]!;
    secret = fresh;
    expect(fresh).not.toBe(old);
    const until = Date.parse(/also signs until (\S+)/.exec(rotated.output)![1]!);
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);

    const during = await client.post('/rest/sms/v2/messages', { destination: '+6426000009', content: 'Hurihanga — 轮换 🔑' });
    await eventually(async () => (statusesOf(during.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    for (const r of statusesOf(during.json.id)) {
      expect(signatures(r).v1).toHaveLength(2);
      expect(signedBy(r, fresh)).toBe(true);
      expect(signedBy(r, old)).toBe(true);
    }

    // A rotation without --keep-old-secret ends the overlap: the newest alone signs.
    const again = await hermod.cli(['apps', 'set-callbacks', 'acme', '--rotate-secret']);
    expect(again.code, again.output).toBe(0);
    expect(again.output).not.toMatch(/also signs/);
    secret = /signing secret: (\S+)/.exec(again.output)![1]!;
    const after = await client.post('/rest/sms/v2/messages', { destination: '+6426000010', content: 'Kotahi anō — 一个 🔐' });
    await eventually(async () => (statusesOf(after.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    for (const r of statusesOf(after.json.id)) {
      expect(signatures(r).v1).toHaveLength(1);
      expect(validSignature(r)).toBe(true);
      expect(signedBy(r, fresh)).toBe(false);
    }

    const tooLong = await hermod.cli(['apps', 'set-callbacks', 'acme', '--rotate-secret', '--keep-old-secret', '30d']);
    expect(tooLong).toMatchObject({ code: 2, output: expect.stringMatching(/at most 7d/) });
    const alone = await hermod.cli(['apps', 'set-callbacks', 'acme', '--keep-old-secret', '1h']);
    expect(alone).toMatchObject({ code: 2, output: expect.stringMatching(/give it with --rotate-secret/) });
  });
});

describe('callbacks owed when every hermod process is killed', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it('delivers after kill -9 and a restart every callback that was owed, with the event ids it was first tried with', async () => {
    const receiver = await startReceiver();
    cleanup.push(receiver.close);
    receiver.state.down = true;
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callbacks-restart-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = { HERMOD_SMSC_SIMULATOR: 'false', HERMOD_SMPP_PORT: String(smscPort), HERMOD_GATEWAYS: '1', HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' };

    let hermod = await startHermod({ dataDir, env });
    const set = await hermod.cli([
      'apps',
      'set-callbacks',
      'acme',
      '--status',
      `http://localhost:${receiver.port}/status`,
      '--reply',
      `http://localhost:${receiver.port}/reply`,
    ]);
    expect(set.code, set.output).toBe(0);
    let client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const contents = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'];
    const ids: string[] = [];
    for (const [i, content] of contents.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642700000${i}`, content, reference: `заказ-${i}` });
      expect(r.status).toBe(202);
      ids.push(r.json.id);
    }
    await eventually(async () => {
      for (const id of ids) if ((await client.get(`/rest/sms/v2/messages?id=${id}`)).json.status !== 'received') return undefined;
      return true;
    });
    await simulator.originate({ source: '+6427000000', destination: '4000', text: 'Ka pai — 谢谢 🙏🏽' });
    // Every message's first callback was tried and refused (its later ones wait behind it), and so was the reply.
    await eventually(async () => {
      const tried = new Set(receiver.received.map((r) => r.json.id));
      return ids.every((id) => tried.has(id)) && receiver.received.some((r) => r.path === '/reply') ? true : undefined;
    });
    const triedBefore = new Map(receiver.received.map((r) => [String(r.headers['x-hermod-event-id']), r.json]));
    expect(receiver.received.every((r) => r.answered === 503)).toBe(true);
    client.close();
    await hermod.kill9();

    receiver.state.down = false;
    hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());

    const delivered = () => receiver.received.filter((r) => r.answered === 200);
    await eventually(async () => {
      const events = new Set(delivered().map((r) => String(r.headers['x-hermod-event-id'])));
      const complete = ids.every((id) => delivered().some((r) => r.path === '/status' && r.json.id === id && r.json.status === 'received'));
      return complete && [...triedBefore.keys()].every((e) => events.has(e)) ? true : undefined;
    }, 60_000);
    for (const [i, id] of ids.entries()) {
      const statuses = delivered().filter((r) => r.path === '/status' && r.json.id === id);
      expect(statuses.map((r) => r.json.status)).toEqual(STATUSES);
      expect(statuses.every((r) => r.json.reference === `заказ-${i}`)).toBe(true);
    }
    const reply = delivered().find((r) => r.path === '/reply')!;
    expect(reply.json).toMatchObject({ source: '+6427000000', content: 'Ka pai — 谢谢 🙏🏽', reply_to: ids[0] });
    for (const [eventId, body] of triedBefore) expect(delivered().find((r) => r.headers['x-hermod-event-id'] === eventId)?.json).toEqual(body);
  });
});

describe('callback retries on the Redis bus', () => {
  const prefix = randomPrefix('cb');
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    await deleteRedisKeys(prefix);
  });

  /** Entries ever added to the callback streams (acknowledged ones stay in a stream until trimmed). */
  const callbackStreamEntries = async (): Promise<number> => {
    const redis = rawRedis();
    try {
      let total = 0;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `{${prefix}:hermod.callbacks*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) if ((await redis.type(key)) === 'stream') total += await redis.xlen(key);
      } while (cursor !== '0');
      return total;
    } finally {
      redis.disconnect();
    }
  };

  it('retries a failing callback after about 1 s, 2 s and 4 s without publishing it again while it waits', async () => {
    const receiver = await startReceiver();
    cleanup.push(receiver.close);
    receiver.state.down = true;
    const running = await startHermodWithSimulator('callbacks-redis', {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      HERMOD_CORE_RUNS_WORKERS: 'true',
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
    });
    cleanup.push(() => running.stop());
    const set = await running.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${receiver.port}/status`]);
    expect(set.code, set.output).toBe(0);

    const sent = await running.client.post('/rest/sms/v2/messages', { destination: '+6428000001', content: 'Привет — 你好世界 👋🏽' });
    expect(sent.status).toBe(202);
    const id = sent.json.id as string;
    const tries = () => receiver.received.filter((r) => r.json.id === id);
    // The first try and three retries of `accepted`: about 7 s of failing.
    await eventually(async () => (tries().length >= 4 ? true : undefined), 30_000);
    const entriesWhileFailing = await callbackStreamEntries();
    receiver.state.down = false;
    await eventually(async () => (tries().some((r) => r.answered === 200 && r.json.status === 'received') ? true : undefined), 30_000);

    const failed = tries().filter((r) => r.answered === 503);
    const accepted = failed.filter((r) => r.json.status === 'accepted');
    expect(new Set(accepted.map((r) => r.headers['x-hermod-event-id'])).size).toBe(1);
    // Backoff 1 s, 2 s, 4 s with ±25 % jitter: never sooner; later only by the time a busy machine takes.
    for (let i = 1; i < Math.min(accepted.length, 4); i++) {
      const gap = accepted[i]!.at! - accepted[i - 1]!.at!;
      expect(gap, `retry ${i}`).toBeGreaterThanOrEqual(0.75 * 1000 * 2 ** (i - 1) - 50);
      expect(gap, `retry ${i}`).toBeLessThanOrEqual(1.25 * 1000 * 2 ** (i - 1) + 3000);
    }
    // Later statuses waited behind the failing one and then came in order.
    expect(
      tries()
        .filter((r) => r.answered === 200)
        .map((r) => r.json.status),
    ).toEqual(STATUSES);
    // One stream entry per callback made, none per retry or per 2 s of waiting.
    expect(entriesWhileFailing).toBeLessThanOrEqual(STATUSES.length);
    expect(await callbackStreamEntries()).toBeLessThanOrEqual(STATUSES.length);
  });
});
