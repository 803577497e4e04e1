import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AssembledMessage } from '../workers/simulators/smsc-simulator';
import { createClient, type Client, type Reply } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { basic, openPost } from './support/raw-request';

const CM = '/rest/campaign_manager/v1';
const IM = '/rest/im/v1/message';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let nextHandset = 0;
const handset = (): string => `+6428${String(++nextHandset).padStart(6, '0')}`;
const imBody = (mobile: string, text: string) => ({
  destination: { mobile },
  message: { type: 'text', text: { body: text } },
  delivery_attempts: [{ channel: 'sms' }],
});
/** Now, as RFC 3339 at +13:00 (a campaign due at once). */
const dueNow = (): string => new Date(Date.now() - 1000 + 13 * 3_600_000).toISOString().slice(0, 19) + '+13:00';

const expectApiError = (r: Reply, status: number, message: RegExp): void => {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toMatchObject({
    code: status,
    message: expect.stringMatching(message),
    errors: [{ code: status, description: expect.stringMatching(message) }],
  });
};
const expectDefaultError = (r: Reply, status: number, message: RegExp): void => {
  expect(r.status, r.text).toBe(status);
  expect(r.json).toEqual({ code: status, message: expect.stringMatching(message) });
};

describe('Idempotency-Key on Intelligent Messaging and Campaign Manager', () => {
  let running: HermodWithSimulator;
  let acme: Client;
  let globex: Client;
  const delivered: AssembledMessage[] = [];
  const deliveredTo = (destination: string): AssembledMessage[] => delivered.filter((m) => m.destination.replace(/^\+/, '') === destination.replace(/^\+/, ''));
  /** Waits until `destination` got `n` messages, then a little longer for any extra to show. */
  const settled = async (destination: string, n: number): Promise<AssembledMessage[]> => {
    await eventually(async () => (deliveredTo(destination).length >= n ? true : undefined), 20_000);
    await new Promise((r) => setTimeout(r, 1500));
    return deliveredTo(destination);
  };

  beforeAll(async () => {
    running = await startHermodWithSimulator('idempotency-im-cm', { HERMOD_GATEWAYS: '2' });
    running.simulator.on('message', (m) => delivered.push(m));
    acme = running.client;
    const created = await running.hermod.cli(['apps', 'create', 'globex', '--password', 'globex-pw']);
    expect(created.code, created.output).toBe(0);
    globex = createClient(running.hermod.baseUrl, running.hermod.ca(), { user: 'globex', pass: 'globex-pw' });
  });

  afterAll(async () => {
    globex?.close();
    await running?.stop();
  });

  it('refuses an empty Idempotency-Key on every interface, each in its own error shape, and sends and creates nothing', async () => {
    const to = handset();
    const empty = { 'idempotency-key': '' };
    const text = 'Kia ora — 你好 🔑';
    const v2 = await acme.post('/rest/sms/v2/messages', { destination: to, content: text }, empty);
    expect(v2.status, v2.text).toBe(400);
    expect(v2.json).toMatchObject({ statusCode: 400, error: expect.any(String), message: expect.stringMatching(/Idempotency-Key/) });
    for (const path of ['/rest/gateway/messages', '/rest/gateway/messages/broadcast']) {
      const v1 = await acme.post(path, { destination: path.endsWith('broadcast') ? [to] : to, content: text }, empty);
      expect(v1.status, v1.text).toBe(400);
      expect(v1.json).toMatchObject({ code: 400, error: 'invalid_attrib', message: expect.stringMatching(/Idempotency-Key/) });
    }
    expectApiError(await acme.post(IM, imBody(to, text), empty), 400, /Idempotency-Key/);
    // Campaign Manager answers a value it does not allow with 422, as it does a key over 255 characters.
    expectDefaultError(await acme.post(`${CM}/acme/lists`, { name: 'kī-kore', members: [{ destination: to }] }, empty), 422, /Idempotency-Key/);
    await new Promise((r) => setTimeout(r, 1500));
    expect(deliveredTo(to)).toEqual([]);
    expect(((await acme.get(`${CM}/acme/lists`)).json as { name: string }[]).filter((l) => l.name === 'kī-kore')).toEqual([]);
  });

  describe('Intelligent Messaging', () => {
    it('answers a retried message with the first answer and sends one SMS, not two', async () => {
      const mobile = handset();
      const body = imBody(mobile, 'Kia ora, e hoa mā — tēnā koe 👋🏽');
      const first = await acme.post(IM, body, { 'idempotency-key': 'im-1' });
      expect(first.status, first.text).toBe(202);
      expect(first.json).toEqual({ id: expect.stringMatching(UUID) });
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await acme.post(IM, body, { 'idempotency-key': 'im-1' });
      expect(again.status, again.text).toBe(202);
      expect(again.json).toEqual(first.json);
      expect(again.headers['idempotent-replayed']).toBe('true');
      const got = await settled(mobile, 1);
      expect(got.map((m) => m.text)).toEqual(['Kia ora, e hoa mā — tēnā koe 👋🏽']);
    });

    it('sends one SMS when many retries of one message race each other', async () => {
      const mobile = handset();
      const body = imBody(mobile, 'Привет 你好世界');
      const answers = await Promise.all(Array.from({ length: 8 }, () => acme.post(IM, body, { 'idempotency-key': 'im-race' })));
      const accepted = answers.filter((r) => r.status === 202);
      expect(accepted.length).toBeGreaterThanOrEqual(1);
      expect(new Set(accepted.map((r) => r.json.id)).size).toBe(1);
      for (const r of answers.filter((a) => a.status !== 202)) {
        expectApiError(r, 409, /still being processed/);
        expect(r.headers['retry-after']).toBe('1');
      }
      expect(await settled(mobile, 1)).toHaveLength(1);
    });

    it('refuses the same key with a different message as a 422 APIError and sends nothing more', async () => {
      const mobile = handset();
      expect((await acme.post(IM, imBody(mobile, 'first'), { 'idempotency-key': 'im-2' })).status).toBe(202);
      const changed = await acme.post(IM, imBody(mobile, 'second'), { 'idempotency-key': 'im-2' });
      expectApiError(changed, 422, /Idempotency-Key was already used with a different request/);
      expect((await settled(mobile, 1)).map((m) => m.text)).toEqual(['first']);
    });

    it('keeps keys apart per application and per interface: the same key elsewhere sends again', async () => {
      const mobile = handset();
      const a = await acme.post(IM, imBody(mobile, 'shared handset'), { 'idempotency-key': 'shared-key' });
      const g = await globex.post(IM, imBody(mobile, 'shared handset'), { 'idempotency-key': 'shared-key' });
      const v2 = await acme.post('/rest/sms/v2/messages', { destination: mobile, content: 'shared handset' }, { 'idempotency-key': 'shared-key' });
      expect([a.status, g.status, v2.status], `${a.text} ${g.text} ${v2.text}`).toEqual([202, 202, 202]);
      expect(new Set([a.json.id, g.json.id, v2.json.id]).size).toBe(3);
      expect(await settled(mobile, 3)).toHaveLength(3);
    });

    it('does not keep the key of a refused message, so the corrected one can use it', async () => {
      const mobile = handset();
      const bad = await acme.post(IM, { ...imBody(mobile, 'x'), destination: {} }, { 'idempotency-key': 'im-fix' });
      expect(bad.status, bad.text).toBe(400);
      const good = await acme.post(IM, imBody(mobile, 'fixed'), { 'idempotency-key': 'im-fix' });
      expect(good.status, good.text).toBe(202);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('Campaign Manager', () => {
    const listsNamed = async (client: Client, app: string, name: string): Promise<unknown[]> => {
      const r = await client.get(`${CM}/${app}/lists`);
      expect(r.status, r.text).toBe(200);
      return (r.json as { name: string }[]).filter((l) => l.name === name);
    };

    it('creates one list when the same list is posted twice with one key, and answers the retry with the first answer', async () => {
      const body = {
        name: 'idem-list-Māori',
        members: [
          { destination: handset(), param1: 'Tēnā koe' },
          { destination: handset(), param1: 'Привет' },
        ],
      };
      const first = await acme.post(`${CM}/acme/lists`, body, { 'idempotency-key': 'list-1' });
      expect(first.status, first.text).toBe(201);
      const again = await acme.post(`${CM}/acme/lists`, body, { 'idempotency-key': 'list-1' });
      expect(again.status, again.text).toBe(201);
      expect(again.json).toEqual(first.json);
      expect(again.headers.location).toBe(first.headers.location);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await listsNamed(acme, 'acme', 'idem-list-Māori')).toHaveLength(1);
    });

    it('creates one campaign and sends each member one message when a campaign is posted twice with one key', async () => {
      const mobile = handset();
      const body = { name: 'idem-campaign', schedule: dueNow(), content: 'Kia ora — 20% off 🎉', members: [{ destination: mobile }] };
      const first = await acme.post(`${CM}/acme/scheduled_campaigns`, body, { 'idempotency-key': 'campaign-1' });
      expect(first.status, first.text).toBe(201);
      const again = await acme.post(`${CM}/acme/scheduled_campaigns`, body, { 'idempotency-key': 'campaign-1' });
      expect(again.status, again.text).toBe(201);
      expect(again.json).toEqual(first.json);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await settled(mobile, 1)).toHaveLength(1);
    });

    it('refuses the same key with a different list as a 422 DefaultError', async () => {
      const first = await acme.post(`${CM}/acme/lists`, { name: 'idem-a', members: [{ destination: handset() }] }, { 'idempotency-key': 'list-2' });
      expect(first.status, first.text).toBe(201);
      const changed = await acme.post(`${CM}/acme/lists`, { name: 'idem-b', members: [{ destination: handset() }] }, { 'idempotency-key': 'list-2' });
      expectDefaultError(changed, 422, /Idempotency-Key was already used with a different request/);
      expect(await listsNamed(acme, 'acme', 'idem-b')).toHaveLength(0);
    });

    it('answers 409 while a list under the key is still streaming in, then replays it once it is in', async () => {
      const ca = running.hermod.ca();
      const headers = { authorization: basic('acme', 'secret'), 'content-type': 'application/json', 'idempotency-key': 'list-slow' };
      const members = Array.from({ length: 200 }, () => ({ destination: handset(), param1: '你好世界' }));
      const text = JSON.stringify({ name: 'idem-slow', members });
      const slow = openPost(running.hermod.baseUrl, ca, `${CM}/acme/lists`, headers);
      slow.write(text.slice(0, 1000));
      // The first request holds the key from its first byte.
      await new Promise((r) => setTimeout(r, 500));
      const meanwhile = await acme.post(`${CM}/acme/lists`, JSON.parse(text), { 'idempotency-key': 'list-slow' });
      expectDefaultError(meanwhile, 409, /still being processed/);
      expect(meanwhile.headers['retry-after'], 'seconds to wait before retrying').toBe('1');
      const first = await slow.end(text.slice(1000));
      expect(first.status, first.text).toBe(201);
      const after = await acme.post(`${CM}/acme/lists`, JSON.parse(text), { 'idempotency-key': 'list-slow' });
      expect(after.status, after.text).toBe(201);
      expect(after.json).toEqual(first.json);
      expect(await listsNamed(acme, 'acme', 'idem-slow')).toHaveLength(1);
    });

    it('keeps Campaign Manager keys apart per application', async () => {
      const body = { name: 'idem-tenants', members: [{ destination: handset() }] };
      const a = await acme.post(`${CM}/acme/lists`, body, { 'idempotency-key': 'tenant-key' });
      const g = await globex.post(`${CM}/globex/lists`, body, { 'idempotency-key': 'tenant-key' });
      expect([a.status, g.status]).toEqual([201, 201]);
      expect(a.json.id).not.toBe(g.json.id);
    });

    it('does not keep the key of a refused campaign, so the corrected one can use it', async () => {
      const bad = await acme.post(
        `${CM}/acme/scheduled_campaigns`,
        { name: 'idem-fix', schedule: 'tomorrow', content: 'x', members: [{ destination: handset() }] },
        { 'idempotency-key': 'campaign-fix' },
      );
      expectDefaultError(bad, 422, /schedule/);
      const good = await acme.post(
        `${CM}/acme/scheduled_campaigns`,
        { name: 'idem-fix', schedule: dueNow(), content: 'x', members: [{ destination: handset() }] },
        { 'idempotency-key': 'campaign-fix' },
      );
      expect(good.status, good.text).toBe(201);
      expect(good.headers['idempotent-replayed']).toBeUndefined();
    });
  });
});
