import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { keyedRequestsAcrossAKill } from './support/keyed-requests-across-a-kill';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { rolePid } from './support/role-pids';
import type { Reply } from './support/https-client';

const SENDS = 1200;
const AT_ONCE = 48;

/**
 * A client that sends with an Idempotency-Key and gets 503 (core died while
 * its request was in core's hands) cannot know whether the message was
 * stored: it retries with the same key. Whatever core stored before it died,
 * the retry must not store (and send) the message a second time.
 */
describe('sends with an Idempotency-Key across a kill -9 of core', () => {
  let h: HermodWithSimulator;
  const submits = new Map<string, number>();
  beforeAll(async () => {
    h = await startHermodWithSimulator('idempotency-core-crash');
    h.simulator.on('submit', (s) => submits.set(s.text, (submits.get(s.text) ?? 0) + 1));
  });
  afterAll(async () => h?.stop());

  it('sends each message once, however its first try ended, when the client retries with the same key', async () => {
    // Scheduled 30 s ahead: the kill lands once a quarter of the sends are answered, within seconds, so nothing is on its
    // way to the SMSC when core dies, and a second submit can only be a second message.
    const scheduled = new Date(Date.now() + 30_000).toISOString();
    const bodyOf = (i: number) => ({
      destination: `+6421771${String(i).padStart(4, '0')}`,
      content: `Kia ora e Mere, tō tono ${i} kua tae mai 🌿 — 收到`,
      scheduled,
    });
    const send = (i: number): Promise<Reply | undefined> =>
      h.client.post('/rest/sms/v2/messages', bodyOf(i), { 'idempotency-key': `tono-${i}` }).catch(() => undefined);

    const core = rolePid(h.hermod.pid, 'core')!;
    const { unanswered, ids } = await keyedRequestsAcrossAKill({
      count: SENDS,
      atOnce: AT_ONCE,
      send,
      ok: 202,
      kill: () => process.kill(core, 'SIGKILL'),
      retryForMs: 45_000,
    });
    // The kill must have landed among the sends: some were not answered 202.
    expect(unanswered.length).toBeGreaterThan(0);

    // A retry of one answered 202 gets the same message.
    const again = await send(0);
    expect(again?.json.id).toBe(ids.get(0));

    await eventually(() => (submits.size >= SENDS ? true : undefined), 120_000, 200);
    await new Promise((r) => setTimeout(r, 3000));
    const twice = [...submits].filter(([, n]) => n > 1).map(([text]) => text);
    expect(`${twice.length} of ${SENDS} sent more than once (${unanswered.length} retried): ${twice.slice(0, 5).join(' | ')}`).toBe(
      `0 of ${SENDS} sent more than once (${unanswered.length} retried): `,
    );
    expect(submits.size).toBe(SENDS);
  }, 240_000);

  it('answers a retry with the message stored, marked as a replay, on every interface, when the answer was never kept', async () => {
    // What a crash between storing the messages and keeping their answer leaves: the messages, and no answer under their keys.
    const scheduled = new Date(Date.now() + 60_000).toISOString();
    const requests: { path: string; body: unknown; key: string }[] = [
      { path: '/rest/sms/v2/messages', body: { destination: '+64217790001', content: 'Tēnā koe, e Hēmi 🌿', scheduled }, key: 'ngaro-v2' },
      { path: '/rest/gateway/messages', body: { destination: '+64217790002', content: 'Ka kite anō — 再见', scheduled }, key: 'ngaro-v1' },
      {
        path: '/rest/gateway/messages/broadcast',
        body: { destination: ['+64217790003', '+64217790004'], content: 'Ngā mihi 👋🏽', scheduled },
        key: 'ngaro-v1-broadcast',
      },
      {
        path: '/rest/im/v1/message',
        body: { destination: { mobile: '+64217790005' }, message: { type: 'text', text: { body: 'Kia ora 🇳🇿' } }, delivery_attempts: [{ channel: 'sms' }] },
        key: 'ngaro-im',
      },
    ];
    const firsts = [];
    for (const r of requests) {
      const first = await h.client.post(r.path, r.body, { 'idempotency-key': r.key });
      expect(first.status, first.text).toBeLessThan(300);
      expect(first.headers['idempotent-replayed'], r.path).toBeUndefined();
      firsts.push(first);
    }

    await h.restart((dataDir) => fs.rmSync(path.join(dataDir, 'state', 'idempotency-keys.jsonl')));

    for (const [i, r] of requests.entries()) {
      const retry = await h.client.post(r.path, r.body, { 'idempotency-key': r.key });
      expect(retry.status, retry.text).toBe(firsts[i]!.status);
      expect(retry.json, r.path).toEqual(firsts[i]!.json);
      expect(retry.headers['idempotent-replayed'], r.path).toBe('true');
    }
  }, 120_000);
});
