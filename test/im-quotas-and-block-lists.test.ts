import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';

const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽 你好';

interface ImCallback {
  id: string;
  status: string;
  detail: string;
  channel?: string;
  reason?: string;
}

describe('Intelligent Messaging under quotas and block lists', () => {
  let h: HermodWithChannels;
  const sms: { destination: string; text: string }[] = [];

  beforeAll(async () => {
    h = await startHermodWithChannels('im-quotas', {});
    h.smsc.on('message', (m: { destination: string; text: string }) => sms.push(m));
  }, 90_000);

  afterAll(() => h?.stop());

  const send = async (mobile: string, reference: string): Promise<string> => {
    const r = await h.client.post('/rest/im/v1/message', {
      destination: { mobile },
      message: { type: 'text', text: { body: `${KIA_ORA} ${reference}` } },
      delivery_attempts: [{ channel: 'wab' }, { channel: 'sms' }],
      reference,
    });
    expect(r.status, r.text).toBe(202);
    return r.json.id as string;
  };
  /** The message's outcome: its first overall callback past accepted, sent and submitted. */
  const outcome = (id: string) =>
    eventually(
      async () =>
        h.callbacks
          .map((c) => c.body as ImCallback)
          .find((c) => c.id === id && c.channel === undefined && !['accepted', 'sent', 'submitted'].includes(c.status)),
      30_000,
      50,
    );
  const digits = (mobile: string) => mobile.replace(/^\+/, '');
  const reachedAnyCarrier = (mobile: string) =>
    sms.some((m) => digits(m.destination) === digits(mobile)) || h.wab.received.some((m) => m.to === digits(mobile));

  it('rejects a message to a blocked prefix with the entry as its reason, reaching neither WhatsApp nor SMS', async () => {
    expect((await h.hermod.cli(['blocklist', 'add', '--app', 'acme', '+642150'])).code).toBe(0);
    const mobile = '+6421500001';
    const id = await send(mobile, 'poraka-1');
    expect(await outcome(id)).toMatchObject({ status: 'rejected', detail: 'poraka-1', reason: expect.stringContaining('+642150') });
    await new Promise((r) => setTimeout(r, 1000));
    expect(reachedAnyCarrier(mobile)).toBe(false);
  });

  it('counts one Intelligent Messaging message once against the quota, and rejects the next one over it', async () => {
    expect((await h.hermod.cli(['apps', 'set-quota', 'acme', '--messages', '1', '--per', 'month'])).code).toBe(0);
    const first = await send('+6421600001', 'rohe-1');
    expect(await outcome(first)).toMatchObject({ status: 'received' });
    const mobile = '+6421600002';
    const second = await send(mobile, 'rohe-2');
    expect(await outcome(second)).toMatchObject({ status: 'rejected', detail: 'rohe-2', reason: expect.stringContaining('quota') });
    await new Promise((r) => setTimeout(r, 1000));
    expect(reachedAnyCarrier(mobile)).toBe(false);
    await h.hermod.cli(['apps', 'set-quota', 'acme', '--clear']);
  });
});
