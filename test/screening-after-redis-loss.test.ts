import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssembledMessage } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { createClient } from './support/https-client';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';

/**
 * Opt-outs and block lists live in history and are loaded into hot state,
 * which a send is screened against. A Redis that restarts without its data
 * (or is flushed) has none of them: hermod must not send to those handsets.
 */
describe('opt-outs and block lists after Redis lost its data', () => {
  const prefix = randomPrefix('screening');
  let h: HermodWithSimulator;
  const delivered: AssembledMessage[] = [];
  beforeAll(async () => {
    h = await startHermodWithSimulator('screening-redis', { HERMOD_STATE: 'redis', HERMOD_REDIS_URL: REDIS_URL, HERMOD_REDIS_PREFIX: prefix });
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
});
