import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import type { HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

interface Assembled {
  destination: string;
  text: string;
  parts: number;
}

describe('SMS encoding and segmentation, end to end', () => {
  let hermod: HermodProcess;
  let client: Client;
  let running: HermodWithSimulator;
  const received: Assembled[] = [];

  beforeAll(async () => {
    running = await startHermodWithSimulator('encoding');
    ({ hermod, client } = running);
    running.simulator.on('message', (m: Assembled) => received.push(m));
  });

  afterAll(() => running?.stop());

  const sendAndReceive = async (destination: string, content: string): Promise<Assembled> => {
    expect((await client.post('/rest/sms/v2/messages', { destination, content })).status).toBe(202);
    return eventually(async () => received.find((m) => m.destination === destination));
  };

  // GSM 03.38 on purpose: this case is about that alphabet and its extension table.
  it('sends 160 GSM characters as one SMS and 161 as two, which the carrier reassembles exactly', async () => {
    const one = 'a'.repeat(159) + '@';
    expect(await sendAndReceive('+6424000001', one)).toMatchObject({ text: one, parts: 1 });
    const two = 'Hello {world} ' + 'b'.repeat(161 - 16) + '€!';
    expect(two.length).toBe(161);
    // '{', '}' and '€' come from the GSM extension table and take two septets each.
    const sent = await sendAndReceive('+6424000002', two);
    expect(sent).toMatchObject({ text: two, parts: 2 });
  });

  it('replaces links in v2 content with short links that redirect to the original', async () => {
    // A Chinese sentence runs on after the link with no space: it stays text, outside the link.
    const sent = await sendAndReceive('+6424000004', 'Kia ora! 你的订单：https://shop.example/orders/42?x=1。谢谢 👋🏽');
    const short = /https:\/\/localhost:\d+\/l\/([A-Za-z0-9]{8})/.exec(sent.text);
    expect(short, sent.text).not.toBeNull();
    expect(sent.text).toBe(`Kia ora! 你的订单：${short![0]}。谢谢 👋🏽`);
    const anonymous = createClient(hermod.baseUrl, hermod.ca());
    const r = await anonymous.get(`/l/${short![1]}`);
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://shop.example/orders/42?x=1');
    const missing = await anonymous.get('/l/AAAAAAAA');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toContain('text/plain');
    anonymous.close();
  });

  it('sends text with an emoji as UCS-2, split at 67 characters per part without breaking the emoji', async () => {
    const text = 'Kia ora, e hoa mā — Привет, 你好 👋🏽 '.repeat(3);
    const sent = await sendAndReceive('+6424000003', text);
    expect(sent.text).toBe(text);
    expect(sent.parts).toBe(2);
  });

  it("sends sms_class 1 to 3 as the GSM message class in the data coding (Kannel's 0x10 | alphabet | class), on v2 and v1, every part of a long one", async () => {
    const codings = new Map<string, number[]>();
    running.simulator.on('submit', (s: { destination: string; dataCoding: number }) =>
      codings.set(s.destination, [...(codings.get(s.destination) ?? []), s.dataCoding]),
    );
    const long = 'Kia ora, e hoa mā — Привет, 你好 👋🏽 '.repeat(3);
    const sends = [
      { path: '/rest/sms/v2/messages', body: { destination: '+6424000011', content: 'Class two: kept on the SIM', sms_class: 2 } },
      { path: '/rest/sms/v2/messages', body: { destination: '+6424000012', content: long, sms_class: 1 } },
      { path: '/rest/gateway/messages', body: { destination: '+6424000013', content: 'Tēnā koe — class three 📟', sms_class: 3 } },
      { path: '/rest/sms/v2/messages', body: { destination: '+6424000014', content: 'No class given' } },
    ];
    for (const { path, body } of sends) {
      const r = await client.post(path, body);
      expect(r.status, r.text).toBeLessThan(300);
    }
    const got = await eventually(async () =>
      ['+6424000011', '+6424000012', '+6424000013', '+6424000014'].every((d) => received.some((m) => m.destination === d)) ? codings : undefined,
    );
    expect(Object.fromEntries(got)).toEqual({ '+6424000011': [0x12], '+6424000012': [0x19, 0x19], '+6424000013': [0x1b], '+6424000014': [0x00] });
    expect(received.find((m) => m.destination === '+6424000012')?.text).toBe(long);
    expect(received.find((m) => m.destination === '+6424000013')?.text).toBe('Tēnā koe — class three 📟');
  });

  it('sends decomposed text (NFD) as it reads composed: GSM-7 in the parts counted for it, and shows it back as the client sent it', async () => {
    const codings = new Map<string, number[]>();
    running.simulator.on('submit', (s: { destination: string; dataCoding: number }) =>
      codings.set(s.destination, [...(codings.get(s.destination) ?? []), s.dataCoding]),
    );
    const short = 'Cafe\u0301 Rene\u0301e';
    // 158 UTF-16 units as written, three UCS-2 parts; 157 characters composed: one GSM-7 SMS.
    const long = `${'x'.repeat(151)} Rene\u0301e`;
    const v1 = await client.post('/rest/gateway/messages', { destination: '+6424000021', content: short });
    expect(v1.status, v1.text).toBe(201);
    const v2 = await client.post('/rest/sms/v2/messages', { destination: '+6424000022', content: long });
    expect(v2.status, v2.text).toBe(202);
    expect(await eventually(async () => received.find((m) => m.destination === '+6424000021'))).toMatchObject({ text: 'Caf\u00e9 Ren\u00e9e', parts: 1 });
    expect(await eventually(async () => received.find((m) => m.destination === '+6424000022'))).toMatchObject({ text: long.normalize('NFC'), parts: 1 });
    expect(Object.fromEntries([...codings].filter(([d]) => d === '+6424000021' || d === '+6424000022'))).toEqual({
      '+6424000021': [0x00],
      '+6424000022': [0x00],
    });
    expect((await client.get(`/rest/gateway/messages/${v1.json[0]}`)).json.content).toBe(short);
    expect((await client.get(`/rest/sms/v2/messages?id=${v2.json.id}`)).json.content).toBe(long);
  });
});
