import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssembledMessage } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { createClient } from './support/https-client';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import type { Redis } from 'ioredis';
import { createRedisState } from '../core/adapters/redis-state';
import { deleteRedisKeys, randomPrefix, rawRedis, REDIS_URL } from './support/redis-keys';

/**
 * Opt-outs and block lists live in history and are loaded into hot state,
 * which a send is screened against. A Redis that restarts without its data
 * (or is flushed) has none of them: hermod must not send to those handsets.
 */
describe('opt-outs and block lists after Redis lost its data', () => {
  const prefix = randomPrefix('screening');
  let h: HermodWithSimulator;
  let startedAt = 0;
  const delivered: AssembledMessage[] = [];
  beforeAll(async () => {
    h = await startHermodWithSimulator('screening-redis', {
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      // Keyed sends look in history for 6 s after the start (or a loss of hot state), for the keyed messages of 6 s before.
      HERMOD_IDEMPOTENCY_HISTORY_CHECK: '6s',
      // And a message leaves core's memory of recent ones 2 s after it was sent (from where a retry is answered too).
      HERMOD_RECENT_MESSAGES_MAX_AGE: '2s',
    });
    startedAt = Date.now();
    h.simulator.on('message', (m) => delivered.push(m));
  });
  afterAll(async () => {
    await h?.stop();
    await deleteRedisKeys(prefix);
  });

  const finalOf = async (body: Record<string, unknown>): Promise<{ id: string; status: string }> => {
    // While hermod reloads the lists a send may be refused for a moment (503): a client tries again.
    const sent = await eventually(async () => {
      const r = await h.client.post('/rest/sms/v2/messages', body);
      return r.status === 202 ? r : undefined;
    }, 20_000);
    return eventually(async () => {
      const r = await h.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
      return ['blocked', 'received'].includes(r.json.status) ? { id: sent.json.id as string, status: r.json.status as string } : undefined;
    }, 20_000);
  };

  /** A keyed send (a 503 while hermod reloads what Redis lost is tried again, as a client does), once it is `received`. */
  const keyedSend = (body: { destination: string; content: string }, key: string) =>
    eventually(async () => {
      const r = await h.client.post('/rest/sms/v2/messages', body, { 'idempotency-key': key });
      return r.status === 503 ? undefined : r;
    }, 20_000);
  const sentAndReceived = async (body: { destination: string; content: string }, key: string): Promise<string> => {
    const first = await keyedSend(body, key);
    expect(first.status, JSON.stringify(first.json)).toBe(202);
    await eventually(async () => ((await h.client.get(`/rest/sms/v2/messages?id=${first.json.id}`)).json.status === 'received' ? true : undefined), 20_000);
    return first.json.id as string;
  };
  /** The client's retry gets the first answer, and the carrier got the message once. */
  const retryAnsweredFirst = async (body: { destination: string; content: string }, key: string, firstId: string): Promise<void> => {
    const again = await keyedSend(body, key);
    expect(again.status, JSON.stringify(again.json)).toBe(202);
    expect(again.json.id).toBe(firstId);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(delivered.filter((m) => m.destination.replace(/^\+/, '') === body.destination.replace(/^\+/, ''))).toHaveLength(1);
  };

  it('still ends sends to a handset that replied STOP and to a blocked prefix blocked, and none reaches the carrier', async () => {
    expect((await h.hermod.cli(['blocklist', 'add', '--app', 'acme', '+6428888'])).code).toBe(0);
    expect((await h.hermod.cli(['blocklist', 'add', '+6427999'])).code).toBe(0);
    const first = await finalOf({ destination: '+6421777001', content: 'Kia ora — reply STOP to opt out 🌿' });
    expect(first.status).toBe('received');
    await h.simulator.originate({ source: '+6421777001', destination: '4000', text: 'stop' });
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6421777001') ? true : undefined));
    expect((await finalOf({ destination: '6421777001', content: 'Anō — 再一次' })).status).toBe('blocked');

    // Redis restarts empty.
    await deleteRedisKeys(prefix);

    const to = ['+6421777001', '64288880002', '+64279990002'];
    const after = await Promise.all(to.map((destination) => finalOf({ destination, content: 'Tēnā koe 👋🏽 你好 مرحبا' })));
    expect(after.map((a) => a.status)).toEqual(['blocked', 'blocked', 'blocked']);
    const reached = delivered.map((m) => m.destination.replace(/^\+/, ''));
    for (const d of to) expect(reached.filter((r) => r === d.replace(/^\+/, '')).length, d).toBe(d === '+6421777001' ? 1 : 0);

    // And a send elsewhere still goes.
    expect((await finalOf({ destination: '+6421777002', content: 'Kia ora 🌿' })).status).toBe('received');
  }, 90_000);

  it('takes the first send of an application created a moment ago, with no wait for the lists to be looked at again', async () => {
    const created = await h.hermod.cli(['apps', 'create', 'kōwhai', '--password', 'kō-secret-🌼']);
    expect(created.code, created.output).toBe(0);
    const kowhai = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'kōwhai', pass: 'kō-secret-🌼' });
    const r = await kowhai.post('/rest/sms/v2/messages', { destination: '+6421777003', content: 'Mōrena 🌼 早上好' });
    expect(r.status, JSON.stringify(r.json)).toBe(202);
  }, 30_000);

  it('answers a retry of a keyed send made before Redis lost its data with the first answer, and sends nothing again (trial)', async () => {
    const key = `korero-${Date.now()}`;
    const body = { destination: '+6421777004', content: 'Kia ora anō — 一次 🔁' };
    // Past the window after the start: only a loss of hot state makes keyed sends look in history again.
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 6_500 - Date.now())));
    const first = await sentAndReceived(body, key);

    // Gone from core's memory of recent messages, as minutes later.
    await new Promise((r) => setTimeout(r, 2_500));
    // Redis restarts empty: the key's answer goes with it.
    await deleteRedisKeys(prefix);

    await retryAnsweredFirst(body, key, first);
  }, 60_000);

  it('answers a retry of a keyed send with the first answer when another core reloaded the lists before this one looked (review)', async () => {
    const key = `korero-rua-${Date.now()}`;
    const body = { destination: '+6421777005', content: 'Kia ora anō, e hoa mā — 二次 🔁' };
    // Past the window the test before opened (its loss): only this loss may make keyed sends look in history.
    await new Promise((r) => setTimeout(r, 6_500));
    const first = await sentAndReceived(body, key);
    await new Promise((r) => setTimeout(r, 2_500));

    // Redis restarts empty, and another core of the deployment finds it first: it loads the opt-outs and block
    // lists again (here: what they were, put back as that core would), before this core has looked.
    const redis = rawRedis();
    try {
      const lists = await keysMatching(redis, [`${prefix}:screening-loaded:*`, `${prefix}:optout:*`, `${prefix}:block:*`]);
      const dumps = await Promise.all(lists.map((k) => redis.dumpBuffer(k)));
      await deleteRedisKeys(prefix);
      await Promise.all(lists.map((k, i) => redis.restore(k, 0, dumps[i]!)));
      await anotherCoreLooks(prefix);
    } finally {
      redis.disconnect();
    }
    // This core hears of it at its next look, a second later.
    await new Promise((r) => setTimeout(r, 1_500));

    await retryAnsweredFirst(body, key, first);
  }, 60_000);
});

async function keysMatching(redis: Redis, patterns: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const pattern of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 10_000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

/** What another core's hot state does on finding the loss, besides loading the lists: marks it, and leaves a notice. */
async function anotherCoreLooks(prefix: string): Promise<void> {
  const state = createRedisState({ redis: REDIS_URL, prefix });
  try {
    await state.dataLost();
  } finally {
    await state.close();
  }
}
