import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImportCommit, Member } from '../proto/gen/hermod/v1/campaigns';
import type { OutboundMessage } from '../proto/gen/hermod/v1/messages';
import { startTestGateway } from './gateway-test-kit';

const ACME = { ok: true, application: { id: 'app-1', name: 'acme', password: '', apiKey: '' } };
const BASIC = `Basic ${Buffer.from('acme:secret').toString('base64')}`;
const IM_ID = '0b8a4d4e-5d7c-4f7e-9a43-1f2c3d4e5f60';

/** Numbers as copied from business cards, with the national trunk prefix kept after the country code, and the number meant. */
const WRITTEN_WITH_TRUNK = [
  ['New Zealand', '+640215550123', '+64215550123'],
  ['the United Kingdom', '+4402079460000', '+442079460000'],
  ['Germany', '+4903012345678', '+493012345678'],
  ['Russia', '+789123456789', '+79123456789'],
] as const;
/** Numbers whose digits after the country code are the number: Italy's leading 0 is dialled from abroad too, +7 812 is St Petersburg. */
const INTERNATIONAL = ['+390612345678', '+393471234567', '+78121234567', '+64215550123'];

let gateway: Awaited<ReturnType<typeof startTestGateway>>;
const sent: string[] = [];
const imported: string[] = [];
beforeAll(async () => {
  gateway = await startTestGateway(
    {
      authenticate: async () => ACME as never,
      send: async (m: OutboundMessage) => {
        sent.push(m.destination);
        return { outcome: { $case: 'accepted', value: { id: IM_ID, status: 'accepted', numericId: 7, replayed: false } } };
      },
    },
    {
      im: {
        takeRateBudget: async ({ wanted }) => ({ limit: 0, granted: wanted, windowEndsInMs: 1_000 }),
        send: async (r) => {
          sent.push(r.destination!.mobile);
          return { id: IM_ID, replayed: false };
        },
      },
      campaigns: {
        startImport: () => ({
          write: async (batch: Member[]) => void imported.push(...batch.map((m) => m.destination)),
          // Core keeps what the gateway says of dropped members and answers it back.
          commit: async (c: ImportCommit) => ({ id: 1, errorMessages: c.errorMessages, members: 1, optedOut: 0, replayed: false }),
          abort: () => undefined,
        }),
      },
    },
  );
});
afterAll(() => gateway.close());

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: BASIC },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

describe('a destination written with its national trunk prefix after the country code', () => {
  it.each(WRITTEN_WITH_TRUNK)('is refused on SMS Gateway v2 with 400 naming the number meant, and not sent (%s)', async (_country, written, meant) => {
    sent.length = 0;
    const res = await post('/rest/sms/v2/messages', { destination: written, content: 'Kia ora' });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringContaining(`the number from abroad is ${meant}`) });
    expect(res.json.message).toMatch(/^destination has the trunk prefix (0|8) after the country code \+\d+; it is dialled only inside the country/);
    expect(sent).toEqual([]);
  });

  it('is refused on SMS Gateway v2 without its plus as well, since v2 takes the country code first', async () => {
    const res = await post('/rest/sms/v2/messages', { destination: '640215550123', content: 'Kia ora' });
    expect(res.status).toBe(400);
    expect(res.json.message).toContain('+64215550123');
  });

  it.each(WRITTEN_WITH_TRUNK)('is refused on Gateway v1 with 400 in its error shape (%s)', async (_country, written, meant) => {
    const res = await post('/rest/gateway/messages', { destination: written, content: 'Kia ora' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 400, error: 'invalid_attrib', message: expect.stringContaining(meant) });
  });

  it('fails only that destination of a Gateway v1 broadcast, saying the number meant', async () => {
    sent.length = 0;
    const res = await post('/rest/gateway/messages/broadcast', { destination: ['+640215550123', '+64215550124'], content: 'Kia ora' });
    expect(res.status).toBe(201);
    expect(res.json).toEqual([
      { id: null, destination: '+640215550123', status: 'failure', message: expect.stringContaining('the number from abroad is +64215550123') },
      { id: 7, destination: '+64215550124', status: 'success', message: null },
    ]);
    expect(sent).toEqual(['+64215550124']);
  });

  it.each(WRITTEN_WITH_TRUNK)('is refused on Intelligent Messaging with 400 naming destination.mobile (%s)', async (_country, written, meant) => {
    const res = await post('/rest/im/v1/message', { destination: { mobile: written }, message: { type: 'text', text: { body: 'Kia ora' } } });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ field: 'destination.mobile', code: 400, description: expect.stringContaining(meant) }]);
  });

  it('names a Campaign Manager member with one, written with + or 00, and keeps bare digits, which the carrier routes as a national number', async () => {
    imported.length = 0;
    const res = await post('/rest/campaign_manager/v1/acme/lists', {
      name: 'Kaihoko',
      strict_validation: false,
      members: [{ destination: '+4402079460000' }, { destination: '004902012345678' }, { destination: '0215550123' }],
    });
    expect(res.status).toBe(201);
    expect(res.json.error_messages).toBe(
      '2 invalid members dropped: members[0].destination "+4402079460000" has the trunk prefix 0 after the country code +44; it is dialled only inside the country, so the number from abroad is +442079460000; ' +
        'members[1].destination "004902012345678" has the trunk prefix 0 after the country code +49; it is dialled only inside the country, so the number from abroad is +492012345678',
    );
    expect(imported).toEqual(['0215550123']);
  });

  it('leaves alone numbers whose digits after the country code are the number, on every interface', async () => {
    sent.length = 0;
    for (const destination of INTERNATIONAL) {
      expect((await post('/rest/sms/v2/messages', { destination, content: 'Ciao' })).status).toBe(202);
      expect((await post('/rest/gateway/messages', { destination, content: 'Ciao' })).status).toBe(201);
      const im = await post('/rest/im/v1/message', { destination: { mobile: destination }, message: { type: 'text', text: { body: 'Ciao' } } });
      expect(im.status).toBe(202);
    }
    expect(sent).toEqual(INTERNATIONAL.flatMap((d) => [d, d, d]));
  });
});

/** +1 numbers whose area code (NPA) starts with 0 or 1, which no North American area code does, and the area code named. */
const AREA_CODE_FROM_0_OR_1 = [
  ['starting with 0', '+10555550123', '055'],
  ['starting with 1, 1 not dialled before a whole number', '+11234567890', '123'],
] as const;
/** North American numbers sent as written: the exchange code is not looked at (+1 555 000 0001, as the docs write). */
const NORTH_AMERICAN = ['+15550000001', '+12125550123', '+12121000000'];
const areaCodeRefusal = (areaCode: string) =>
  new RegExp(`^has the area code ${areaCode} after the country code \\+1; North American area codes start with 2 to 9`);

describe('a +1 destination whose area code starts with 0 or 1', () => {
  it.each(AREA_CODE_FROM_0_OR_1)('is refused on SMS Gateway v2 with 400 naming the area code, and not sent (%s)', async (_what, written, areaCode) => {
    sent.length = 0;
    const res = await post('/rest/sms/v2/messages', { destination: written, content: 'Hello' });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/^destination has the area code /) });
    expect(res.json.message.slice('destination '.length)).toMatch(areaCodeRefusal(areaCode));
    const bare = await post('/rest/sms/v2/messages', { destination: written.slice(1), content: 'Hello' });
    expect(bare.status).toBe(400);
    expect(sent).toEqual([]);
  });

  it.each(AREA_CODE_FROM_0_OR_1)('is refused on Gateway v1 with 400 in its error shape (%s)', async (_what, written, areaCode) => {
    sent.length = 0;
    const res = await post('/rest/gateway/messages', { destination: written, content: 'Hello' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 400, error: 'invalid_attrib', message: expect.stringMatching(/^destination has the area code /) });
    expect(res.json.message.slice('destination '.length)).toMatch(areaCodeRefusal(areaCode));
    expect(sent).toEqual([]);
  });

  it('fails only that destination of a Gateway v1 broadcast, naming its area code', async () => {
    sent.length = 0;
    const res = await post('/rest/gateway/messages/broadcast', { destination: ['+10555550123', '+12125550123'], content: 'Hello' });
    expect(res.status).toBe(201);
    expect(res.json).toEqual([
      {
        id: null,
        destination: '+10555550123',
        status: 'failure',
        message: expect.stringMatching(/^destination has the area code 055 after the country code \+1; /),
      },
      { id: 7, destination: '+12125550123', status: 'success', message: null },
    ]);
    expect(sent).toEqual(['+12125550123']);
  });

  it.each(AREA_CODE_FROM_0_OR_1)('is refused on Intelligent Messaging with 400 naming destination.mobile (%s)', async (_what, written, areaCode) => {
    sent.length = 0;
    const res = await post('/rest/im/v1/message', { destination: { mobile: written }, message: { type: 'text', text: { body: 'Hello' } } });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([{ field: 'destination.mobile', code: 400, description: expect.stringMatching(areaCodeRefusal(areaCode)) }]);
    expect(sent).toEqual([]);
  });

  it('refuses a Campaign Manager list with such a member with 422 in DefaultError, and drops it without strict validation, keeping bare digits', async () => {
    imported.length = 0;
    const strict = await post('/rest/campaign_manager/v1/acme/lists', { name: 'Customers', members: [{ destination: '+10555550123' }] });
    expect(strict.status).toBe(422);
    expect(strict.json).toEqual({
      code: 422,
      message: expect.stringMatching(/^1 invalid member: members\[0\]\.destination "\+10555550123" has the area code 055 after the country code \+1; /),
    });
    const lax = await post('/rest/campaign_manager/v1/acme/lists', {
      name: 'Customers',
      strict_validation: false,
      members: [{ destination: '0011234567890' }, { destination: '10555550123' }, { destination: '+12125550123' }],
    });
    expect(lax.status).toBe(201);
    expect(lax.json.error_messages).toMatch(
      /^1 invalid member dropped: members\[0\]\.destination "0011234567890" has the area code 123 after the country code \+1; /,
    );
    expect(imported).toEqual(['10555550123', '+12125550123']);
  });

  it('leaves alone North American numbers whose area code starts with 2 to 9, whatever the exchange code, on every interface', async () => {
    sent.length = 0;
    for (const destination of NORTH_AMERICAN) {
      expect((await post('/rest/sms/v2/messages', { destination, content: 'Hello' })).status).toBe(202);
      expect((await post('/rest/gateway/messages', { destination, content: 'Hello' })).status).toBe(201);
      const im = await post('/rest/im/v1/message', { destination: { mobile: destination }, message: { type: 'text', text: { body: 'Hello' } } });
      expect(im.status).toBe(202);
    }
    expect(sent).toEqual(NORTH_AMERICAN.flatMap((d) => [d, d, d]));
  });
});
