import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';
import { createClient } from './support/https-client';

/** 135 × ē: UCS-2, three parts of at most 67 characters. */
const LONG = 'ē'.repeat(135);
const FINAL = new Set(['received', 'failed']);
const digitsOf = (mobile: string): string => mobile.replace(/^\+/, '');

/**
 * A long SMS goes to the carrier in parts, one submit (and one carrier id)
 * each, and the carrier reports on each part: a handset that got only some of
 * them did not get the message. Half the parts here are undeliverable, at
 * random; what each message's parts met is read off the simulator.
 */
describe('a long SMS whose parts the carrier reports on one by one', () => {
  let h: HermodWithChannels;
  /** Each destination's parts' outcomes, in the order submitted. */
  const outcomes = new Map<string, string[]>();
  const partsMet = (mobile: string): string[] => outcomes.get(digitsOf(mobile)) ?? [];
  const wholeOrNot = (mobile: string): 'received' | 'failed' => (partsMet(mobile).every((o) => o === 'delivered') ? 'received' : 'failed');

  beforeAll(async () => {
    h = await startHermodWithChannels('multipart-receipts', { smsc: { outcomes: { delivered: 1, undeliverable: 1 }, seed: 2026 } });
    h.smsc.on('submit', (s: { destination: string; outcome?: string }) => {
      const key = digitsOf(s.destination);
      outcomes.set(key, [...(outcomes.get(key) ?? []), s.outcome ?? 'refused']);
    });
    const set = await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `${h.receiverUrl}/status`]);
    expect(set.code, set.output).toBe(0);
  }, 90_000);

  afterAll(() => h?.stop());

  it('tells a v2 client received only once every part was delivered, and failed, once, when any part was not', async () => {
    const handsets = Array.from({ length: 24 }, (_, i) => `+64219980${String(i).padStart(2, '0')}`);
    const ids = new Map<string, string>();
    const v2 = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'acme', pass: 'secret' });
    for (const destination of handsets) {
      const r = await v2.post('/rest/sms/v2/messages', { destination, content: LONG });
      expect(r.status, r.text).toBe(202);
      ids.set(destination, r.json.id);
    }
    const finalsOf = (id: string): string[] =>
      h.callbacks.filter((c) => c.path === '/status' && c.body.id === id && FINAL.has(c.body.status)).map((c) => c.body.status);
    await eventually(() => (handsets.every((d) => partsMet(d).length === 3 && finalsOf(ids.get(d)!).length > 0) ? true : undefined), 30_000, 100);
    // A second final status, were one coming, comes within a second or two.
    await new Promise((r) => setTimeout(r, 3000));

    const told = handsets.map((d) => `${d} ${partsMet(d).join(',')}: ${finalsOf(ids.get(d)!).join(' → ')}`);
    expect(told).toEqual(handsets.map((d) => `${d} ${partsMet(d).join(',')}: ${wholeOrNot(d)}`));
    // Both kinds were met, and a message whose first part arrived but a later one did not among them.
    expect(handsets.some((d) => wholeOrNot(d) === 'received')).toBe(true);
    expect(handsets.some((d) => partsMet(d)[0] === 'delivered' && wholeOrNot(d) === 'failed')).toBe(true);
    for (const d of handsets) {
      const shown = await v2.get(`/rest/sms/v2/messages?id=${ids.get(d)}`);
      expect(shown.json.status, d).toBe(wholeOrNot(d));
    }
    v2.close();
  });

  it('falls back from an Intelligent Messaging SMS attempt whose parts did not all arrive', async () => {
    // Ending in 1 to 6: the WhatsApp simulator answers late (7), never reports (8) or fails (9) the others.
    const handsets = Array.from({ length: 12 }, (_, i) => `+64219981${Math.floor(i / 6)}${(i % 6) + 1}`);
    const ids = new Map<string, string>();
    for (const mobile of handsets) {
      const r = await h.client.post('/rest/im/v1/message', {
        destination: { mobile },
        message: { type: 'text', text: { body: LONG } },
        delivery_attempts: [{ channel: 'sms' }, { channel: 'wab' }],
      });
      expect(r.status, r.text).toBe(202);
      ids.set(mobile, r.json.id);
    }
    // WhatsApp may be read before its delivery is told: `read` says received, and more.
    const overall = (id: string): string[] =>
      h.callbacks
        .filter((c) => c.body.id === id && c.body.channel === undefined && (FINAL.has(c.body.status) || c.body.status === 'read'))
        .map((c) => (c.body.status === 'read' ? 'received' : c.body.status));
    await eventually(() => (handsets.every((m) => overall(ids.get(m)!).length > 0) ? true : undefined), 30_000, 100);
    await new Promise((r) => setTimeout(r, 1500));

    const wabTo = (mobile: string): number => h.wab.received.filter((m) => m.to === digitsOf(mobile)).length;
    const got = handsets.map((m) => `${m} ${partsMet(m).join(',')}: ${overall(ids.get(m)!).join(' → ')}, WhatsApp ${wabTo(m)}`);
    // The message got through either way: whole by SMS, or by WhatsApp after the SMS did not arrive whole.
    expect(got).toEqual(handsets.map((m) => `${m} ${partsMet(m).join(',')}: received, WhatsApp ${wholeOrNot(m) === 'received' ? 0 : 1}`));
    expect(handsets.some((m) => wholeOrNot(m) === 'failed')).toBe(true);
  });
});
