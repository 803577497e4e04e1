import { credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CampaignsClient, type Template } from '../proto/gen/hermod/v1/campaigns';
import type { AssembledMessage, SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient, type Client, type Reply } from './support/https-client';
import type { HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const CM = '/rest/campaign_manager/v1';
const DAY = 86_400_000;
const MAX_IMPORT_BYTES = 64 * 1024;

/** The instant `t` written as RFC 3339 local time at a UTC offset of `minutes`. */
function atOffset(t: number, minutes: number): string {
  const abs = Math.abs(minutes);
  const zone = `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return new Date(t + minutes * 60_000).toISOString().slice(0, 19) + zone;
}

/** A handset number of its own for each use, so tests never see each other's messages. */
let nextHandset = 0;
const handset = (): string => `+6427${String(++nextHandset).padStart(6, '0')}`;

/** `n` characters (code points) of world text: macrons, Cyrillic, CJK, emoji with a skin-tone modifier. */
const world = (n: number): string =>
  Array.from('Kia ora, e hoa mā — tēnā koe. Привет, 你好世界 👋🏽🎉 '.repeat(Math.ceil(n / 40) + 1))
    .slice(0, n)
    .join('');

/** An e-mail address of exactly `length` characters (at least 196), every label at most 63. */
const emailOf = (length: number): string => `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 196)}.nz`;

interface ListJson {
  id: number;
  name: string;
  created: string;
  members: Record<string, string>[];
}

interface ReportRow {
  list_name: string;
  message_id: number;
  mobile: string;
  sent_date: string;
  status: string;
  status_date: string;
  timezone: string;
}

describe('Campaign Manager over HTTPS', () => {
  let running: HermodWithSimulator;
  let hermod: HermodProcess;
  let simulator: SmscSimulator;
  let acme: Client;
  let globex: Client;
  let anonymous: Client;
  const delivered: AssembledMessage[] = [];

  beforeAll(async () => {
    running = await startHermodWithSimulator('campaign-manager', { HERMOD_MAX_IMPORT_BYTES: String(MAX_IMPORT_BYTES) });
    ({ hermod, simulator, client: acme } = running);
    simulator.on('message', (m) => delivered.push(m));
    const created = await hermod.cli(['apps', 'create', 'globex', '--password', 'globex-pw']);
    expect(created.code, created.output).toBe(0);
    globex = createClient(hermod.baseUrl, hermod.ca(), { user: 'globex', pass: 'globex-pw' });
    anonymous = createClient(hermod.baseUrl, hermod.ca());
  });

  afterAll(async () => {
    globex?.close();
    anonymous?.close();
    await running?.stop();
  });

  const del = (client: Client, path: string): Promise<Reply> => client.request('DELETE', path);
  const listsOf = async (client: Client, app: string): Promise<ListJson[]> => {
    const r = await client.get(`${CM}/${app}/lists`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    return r.json as ListJson[];
  };
  const createList = async (client: Client, app: string, body: Record<string, unknown>): Promise<Reply> => client.post(`${CM}/${app}/lists`, body);
  const listBody = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: 'kiritaki — клиенты',
    members: [{ destination: handset() }],
    ...extra,
  });
  const campaignBody = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: 'Hoko o te kōanga 🌸',
    schedule: atOffset(Date.now() + DAY, 13),
    content: 'Ka tīmata te hoko āpōpō — 明天开始 🎉',
    members: [{ destination: handset() }],
    ...extra,
  });
  const deliveredTo = (destination: string): AssembledMessage[] => delivered.filter((m) => m.destination === destination);
  const report = async (client: Client, app: string, id: number): Promise<ReportRow[]> => {
    const r = await client.get(`${CM}/${app}/${id}/report`);
    expect(r.status, r.text).toBe(200);
    return r.json as ReportRow[];
  };
  const expectDefaultError = (r: Reply, status: number): void => {
    expect(r.status, r.text).toBe(status);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json).toEqual({ code: status, message: expect.any(String) });
  };
  const expectPlainError = (r: Reply, status: number): void => {
    expect(r.status, r.text).toBe(status);
    expect(r.headers['content-type']).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/^error: \S/);
  };
  /**
   * Creates or changes a template of `app`. Straight over core's gRPC, as
   * `hermod templates set` would: bin/hermod.ts does not route the
   * `templates` commands to the operators' CLI yet.
   */
  const setTemplate = (app: string, name: string, content: string): Promise<Template> => {
    const grpc = new CampaignsClient(hermod.coreAddress, credentials.createInsecure());
    return new Promise<Template>((resolve, reject) =>
      grpc.upsertTemplate({ applicationName: app, name, content }, (err, t) => (err ? reject(err) : resolve(t))),
    ).finally(() => grpc.close());
  };
  /** Makes `destination` opt out of acme: a message to it first, then its STOP reply. */
  const optOut = async (destination: string): Promise<void> => {
    const sent = await acme.post('/rest/sms/v2/messages', { destination, content: 'Ngā rongo hou — новости 📰 Reply STOP to opt out' });
    expect(sent.status).toBe(202);
    await eventually(async () => ((await acme.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined));
    await simulator.originate({ source: destination, destination: '4000', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(destination) ? true : undefined));
  };

  describe('health and access', () => {
    it('answers healthz with 200 and a plain-text body without credentials', async () => {
      const r = await anonymous.get(`${CM}/healthz`);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/plain/);
      expect(r.text.length).toBeGreaterThan(0);
    });

    it('refuses a request without credentials or with a wrong password with 401 and a DefaultError', async () => {
      for (const r of [
        await anonymous.get(`${CM}/acme/lists`),
        await anonymous.post(`${CM}/acme/lists`, listBody()),
        await anonymous.get(`${CM}/acme/templates`),
      ]) {
        expectDefaultError(r, 401);
        expect(r.headers['www-authenticate']).toMatch(/^Basic/);
      }
      const wrong = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'not-the-password' });
      try {
        expectDefaultError(await wrong.get(`${CM}/acme/lists`), 401);
        expectDefaultError(await wrong.get(`${CM}/acme/1/report`), 401);
      } finally {
        wrong.close();
      }
    });

    it("refuses another application's name in the path with 403 in each operation's error shape", async () => {
      expectDefaultError(await acme.get(`${CM}/globex/lists`), 403);
      expectDefaultError(await acme.post(`${CM}/globex/lists`, listBody()), 403);
      expectDefaultError(await acme.post(`${CM}/globex/scheduled_campaigns`, campaignBody()), 403);
      expectDefaultError(await acme.get(`${CM}/globex/templates`), 403);
      expectDefaultError(await acme.get(`${CM}/globex/1/report`), 403);
      expectPlainError(await del(acme, `${CM}/globex/lists/1`), 403);
      expectPlainError(await acme.post(`${CM}/globex/delete_multiple_lists`, { list_ids: [1] }), 403);
    });

    it('takes an application_name of 255 characters as a name and refuses one of 256 characters', async () => {
      expectDefaultError(await acme.get(`${CM}/${'a'.repeat(255)}/lists`), 403);
      const refused = await acme.get(`${CM}/${'a'.repeat(256)}/lists`);
      expectDefaultError(refused, 422);
      expect(refused.json.message).toMatch(/application_name/);
    });
  });

  describe('lists', () => {
    it('creates a list with 201, a Location header and a safe integer id, then shows it with its members and params', async () => {
      const [a, b] = [handset(), handset()];
      const before = Date.now();
      const r = await createList(acme, 'acme', {
        name: 'kiritaki VIP — 贵宾',
        batch: 'Poutū-te-rangi',
        email: 'ops@acme.example',
        members: [{ destination: a, param1: 'Ānaru 👋🏽', param6: 'шесть' }, { destination: b }],
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toEqual({ id: expect.any(Number) });
      const id = r.json.id as number;
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id).toBeGreaterThan(0);
      expect(r.headers.location).toBe(`${hermod.baseUrl}${CM}/acme/lists/${id}`);

      const shown = (await listsOf(acme, 'acme')).find((l) => l.id === id);
      expect(shown).toEqual({
        id,
        name: 'kiritaki VIP — 贵宾',
        created: expect.any(String),
        members: [{ destination: a, param1: 'Ānaru 👋🏽', param6: 'шесть' }, { destination: b }],
      });
      const created = Date.parse(shown!.created);
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      expect(created).toBeLessThanOrEqual(Date.now() + 1000);
    });

    it('answers GET on the Location of a new list with that list, as GET lists shows it', async () => {
      const member = { destination: handset(), param1: 'Kia ora, e hoa mā', param2: '你好 👋🏽' };
      const r = await createList(acme, 'acme', { name: 'Kia ora — 你好 👋🏽', members: [member, { destination: handset() }] });
      expect(r.status, r.text).toBe(201);
      const got = await acme.get(new URL(r.headers.location as string).pathname);
      expect(got.status, got.text).toBe(200);
      expect(got.headers['content-type']).toMatch(/^application\/json/);
      expect(got.json).toEqual({
        id: r.json.id,
        name: 'Kia ora — 你好 👋🏽',
        created: expect.any(String),
        members: [member, { destination: expect.any(String) }],
      });
      expect(got.json).toEqual((await listsOf(acme, 'acme')).find((l) => l.id === r.json.id));
    });

    it('answers GET of a deleted list, an unknown id, a non-id and another application’s list with 404 in DefaultError', async () => {
      const theirs = (await createList(globex, 'globex', listBody({ name: 'Kia ora, e hoa mā' }))).json.id as number;
      expect((await globex.get(`${CM}/globex/lists/${theirs}`)).json.name).toBe('Kia ora, e hoa mā');
      for (const id of [theirs, 4242424242, 'abc', '0']) expectDefaultError(await acme.get(`${CM}/acme/lists/${id}`), 404);
      expectDefaultError(await acme.get(`${CM}/globex/lists/${theirs}`), 403);
      // Deleted again, so globex keeps only the list the test below makes.
      expect((await del(globex, `${CM}/globex/lists/${theirs}`)).status).toBe(204);
      expectDefaultError(await globex.get(`${CM}/globex/lists/${theirs}`), 404);
    });

    const memberWith = (params: Record<string, string>) => ({ members: [{ destination: handset(), ...params }] });
    const listLimits: [string, () => Record<string, unknown>, () => Record<string, unknown>][] = [
      ['a name of 50 characters', () => ({ name: world(50) }), () => ({ name: world(51) })],
      ['a name of 50 emoji', () => ({ name: '🎉'.repeat(50) }), () => ({ name: '🎉'.repeat(51) })],
      ['a name of 1 character', () => ({ name: 'ā' }), () => ({ name: '' })],
      ['a param of 50 characters', () => memberWith({ param3: world(50) }), () => memberWith({ param3: world(51) })],
      ['a param of 1 character', () => memberWith({ param1: '你' }), () => memberWith({ param1: '' })],
      ['a batch of 255 characters', () => ({ batch: world(255) }), () => ({ batch: world(256) })],
      ['a batch of 1 character', () => ({ batch: 'б' }), () => ({ batch: '' })],
      ['an e-mail of 254 characters', () => ({ email: emailOf(254) }), () => ({ email: emailOf(255) })],
      ['an e-mail of 3 characters', () => ({ email: 'a@b' }), () => ({ email: 'a@' })],
      ['a well-formed e-mail', () => ({ email: 'lists@acme.example' }), () => ({ email: 'not an e-mail' })],
      [
        'a destination with its country code after the plus',
        () => ({ members: [{ destination: '+6421000001' }] }),
        // No country code starts with 0: a plus and a 0 is no number a carrier can reach.
        () => ({ members: [{ destination: '+000' }] }),
      ],
      [
        'a destination of 15 digits',
        () => ({ members: [{ destination: '+' + '6'.repeat(15) }] }),
        () => ({ members: [{ destination: '+' + '6'.repeat(16) }] }),
      ],
      ['remove_opt_outs and strict_validation as booleans', () => ({ remove_opt_outs: false, strict_validation: true }), () => ({ remove_opt_outs: 'no' })],
    ];
    for (const [what, ok, bad] of listLimits) {
      it(`accepts a list with ${what} and refuses one past it with 422`, async () => {
        const accepted = await createList(acme, 'acme', listBody(ok()));
        expect(accepted.status, accepted.text).toBe(201);
        expectDefaultError(await createList(acme, 'acme', listBody(bad())), 422);
      });
    }

    it('refuses a list whose members are empty, missing or not an array, or whose name is missing, with 422', async () => {
      expectDefaultError(await createList(acme, 'acme', { name: 'empty', members: [] }), 422);
      expectDefaultError(await createList(acme, 'acme', { name: 'no members' }), 422);
      expectDefaultError(await createList(acme, 'acme', { name: 'not an array', members: { destination: handset() } }), 422);
      expectDefaultError(await createList(acme, 'acme', { members: [{ destination: handset() }] }), 422);
      expectDefaultError(await createList(acme, 'acme', { name: 'no destination', members: [{ param1: 'Привет' }] }), 422);
    });

    it('refuses a list or campaign whose name holds a control character with 422 naming it, and keeps names in any script with emoji', async () => {
      for (const [name, codePoint] of [
        ['line1\nline2', 'U+000A'],
        ['kiritaki\tcol', 'U+0009'],
        ['\u001b[31mRED', 'U+001B'],
        ['nul\u0000here', 'U+0000'],
        ['del\u007f', 'U+007F'],
        ['c1\u0085next', 'U+0085'],
      ]) {
        for (const refused of [await createList(acme, 'acme', listBody({ name })), await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ name }))]) {
          expectDefaultError(refused, 422);
          expect(refused.json.message).toBe(`name has a control character (${codePoint}); names are printable text`);
        }
      }
      expect((await createList(acme, 'acme', listBody({ name: 'Kiritaki ā-rohe — 客户 👋🏽' }))).status).toBe(201);
      expect((await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ name: 'Hoko ✨ 促销 — Привет' }))).status).toBe(201);
    });

    it('refuses a list or campaign name of nothing visible, or with a line separator or a direction override, with 422', async () => {
      for (const [name, message] of [
        ['   ', 'name has nothing visible; names are printable text'],
        ['\u200b', 'name has nothing visible; names are printable text'],
        ['one\u2028two', 'name has a line separator (U+2028); names are one line'],
        ['invoice \u202egpj.exe', expect.stringMatching(/^name has a direction control \(U\+202E\) that can make a name read as another; /)],
      ] as const) {
        for (const refused of [await createList(acme, 'acme', listBody({ name })), await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ name }))]) {
          expectDefaultError(refused, 422);
          expect(refused.json.message).toEqual(message);
        }
      }
      expect((await createList(acme, 'acme', listBody({ name: 'عرض الربيع — מבצע 👨‍👩‍👧' }))).status).toBe(201);
    });

    it('refuses a whole list with one invalid member under strict validation, the default', async () => {
      const name = 'strict list';
      for (const body of [
        { name, members: [{ destination: handset() }, { destination: 'call me' }] },
        { name, strict_validation: true, members: [{ destination: handset() }, { destination: handset(), param2: '' }] },
      ]) {
        const r = await createList(acme, 'acme', body);
        expectDefaultError(r, 422);
        expect(r.json.message).toMatch(/members\[1\]/);
      }
      expect((await listsOf(acme, 'acme')).some((l) => l.name === name)).toBe(false);
    });

    it('refuses a member whose parameter holds a control character a handset cannot show, naming the member and parameter', async () => {
      const r = await createList(acme, 'acme', {
        name: 'pasted from a terminal',
        members: [
          { destination: handset(), param1: 'Ānaru' },
          { destination: handset(), param1: 'Mere\u0000', param2: 'Tāmaki\u001b[31m' },
        ],
      });
      expectDefaultError(r, 422);
      expect(r.json.message).toMatch(/members\[1\]\.param1 "Mere\\u0000" has a control character \(U\+0000\)/);
    });

    it('keeps one member per handset, however its number is written, and says how many it removed', async () => {
      const a = handset();
      const b = handset();
      const r = await createList(acme, 'acme', {
        name: 'merged from three CRMs',
        members: [
          { destination: a, param1: 'Ānaru' },
          { destination: a, param1: 'Ānaru again' },
          { destination: a.slice(1), param1: 'no plus' },
          { destination: `00${a.slice(1)}`, param1: 'with 00' },
          { destination: b, param1: '小明' },
        ],
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json.error_messages).toMatch(/3 duplicate members were removed/);
      const shown = (await listsOf(acme, 'acme')).find((l) => l.id === r.json.id);
      expect(shown?.members).toEqual([
        { destination: a, param1: 'Ānaru' },
        { destination: b, param1: '小明' },
      ]);
    });

    it('writes field paths one way in every message: members[0].param1 and list_ids[0]', async () => {
      const member = await createList(acme, 'acme', { name: 'ara — 路径', members: [{ destination: handset(), param1: 'ā'.repeat(51) }] });
      expectDefaultError(member, 422);
      expect(member.json.message).toBe(`1 invalid member: members[0].param1 "${'ā'.repeat(24)}…" must NOT have more than 50 characters`);
      const ids = await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [1, 'tahi'] });
      expectPlainError(ids, 422);
      expect(ids.text).toBe('error: list_ids[1]: must be integer');
    });

    it('drops invalid members without strict validation, and says which in error_messages', async () => {
      const [a, b] = [handset(), handset()];
      const r = await createList(acme, 'acme', {
        name: 'lenient list',
        strict_validation: false,
        members: [{ destination: a }, { destination: 'call me' }, { destination: b, param1: world(51) }, { destination: b, param1: 'Ka pai 👍🏽' }],
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toEqual({ id: expect.any(Number), error_messages: expect.stringMatching(/2 invalid members dropped/) });
      expect(r.json.error_messages).toMatch(/members\[1\]/);
      expect(r.json.error_messages).toMatch(/members\[2\]/);
      const shown = (await listsOf(acme, 'acme')).find((l) => l.id === r.json.id);
      expect(shown?.members).toEqual([{ destination: a }, { destination: b, param1: 'Ka pai 👍🏽' }]);

      expectDefaultError(await createList(acme, 'acme', { name: 'nothing valid', strict_validation: false, members: [{ destination: 'x' }] }), 422);
    });

    it('names each dropped member once, by its first problem in words, and counts every one it does not name', async () => {
      // As a CRM export gave it: ten bad numbers (one with a bad parameter too), and five bad parameters near the end.
      const badNumbers = ['+64 21 abc', '021-555-0101', '', 'call me', '+0211234', '12', '+6421 800 001', '(021) 555 0102', 'tel:+64215550103', '+64 21 xyz'];
      const members: Record<string, string>[] = Array.from({ length: 115 }, () => ({ destination: handset() }));
      badNumbers.forEach((destination, i) => {
        members[50 + i] = { destination, ...(i === 4 ? { param1: world(60) } : {}) };
      });
      for (const i of [110, 111, 112]) members[i] = { destination: handset(), param2: world(51) };
      for (const i of [113, 114]) members[i] = { destination: handset(), param3: '' };

      const lenient = await createList(acme, 'acme', { name: 'from the CRM', strict_validation: false, members });
      expect(lenient.status, lenient.text).toBe(201);
      const said = lenient.json.error_messages as string;
      expect(said).toMatch(/^15 invalid members dropped: members\[50\]\.destination "\+64 21 abc" is not a phone number/);
      expect(said).not.toMatch(/pattern|\^|\$|\{\d/);
      expect(said.match(/members\[\d+\]/g)).toEqual(Array.from({ length: 10 }, (_, i) => `members[${50 + i}]`));
      expect(said).toMatch(/; … and 5 more$/);
      expect((await listsOf(acme, 'acme')).find((l) => l.id === lenient.json.id)?.members).toHaveLength(100);

      const strict = await createList(acme, 'acme', { name: 'from the CRM', members });
      expectDefaultError(strict, 422);
      expect(strict.json.message).toBe(said.replace('15 invalid members dropped', '15 invalid members'));

      const params = await createList(acme, 'acme', { name: 'from the CRM', members: members.slice(110) });
      expectDefaultError(params, 422);
      expect(params.json.message).toMatch(
        /^5 invalid members: members\[0\]\.param2 "[^"]{1,30}…" must NOT have more than 50 characters; .*members\[3\]\.param3 "" must not be empty; members\[4\]/,
      );
    });

    it('deletes a list with 204 and no body, after which it is gone from GET lists at once', async () => {
      const id = (await createList(acme, 'acme', listBody({ name: 'to delete' }))).json.id as number;
      expect((await listsOf(acme, 'acme')).some((l) => l.id === id)).toBe(true);
      const r = await del(acme, `${CM}/acme/lists/${id}`);
      expect(r.status).toBe(204);
      expect(r.text).toBe('');
      expect((await listsOf(acme, 'acme')).some((l) => l.id === id)).toBe(false);
      expectPlainError(await del(acme, `${CM}/acme/lists/${id}`), 404);
    });

    it('answers a list id that is not an integer, or is unknown, with 404 in plain text on delete', async () => {
      for (const id of ['abc', '1.5', '-3', '0', '9007199254740992']) expectPlainError(await del(acme, `${CM}/acme/lists/${id}`), 404);
      expectPlainError(await del(acme, `${CM}/acme/lists/4242424242`), 404);
    });

    it('deletes several lists at once and answers with the ids it deleted', async () => {
      const ids = [] as number[];
      for (const name of ['bulk one', 'bulk two']) ids.push((await createList(acme, 'acme', listBody({ name }))).json.id as number);
      const r = await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [...ids, 4242424242] });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ list_ids: expect.any(Array), message: 'IDs of deleted lists' });
      expect([...r.json.list_ids].sort()).toEqual([...ids].sort());
      const left = await listsOf(acme, 'acme');
      for (const id of ids) expect(left.some((l) => l.id === id)).toBe(false);
      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: ids }), 404);
    });

    it('takes 100 list ids in one bulk delete and refuses 101 or none with 422 in plain text', async () => {
      const id = (await createList(acme, 'acme', listBody({ name: 'one of a hundred' }))).json.id as number;
      const unknown = Array.from({ length: 99 }, (_, i) => 5_000_000_000 + i);
      const r = await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [id, ...unknown] });
      expect(r.status, r.text).toBe(200);
      expect(r.json.list_ids).toEqual([id]);

      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [...unknown, 5_100_000_000, 5_100_000_001] }), 422);
      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [] }), 422);
      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, {}), 422);
      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: ['1', 2.5] }), 422);
    });

    it("never shows or deletes another application's list", async () => {
      const r = await createList(globex, 'globex', listBody({ name: 'globex private' }));
      expect(r.status, r.text).toBe(201);
      const id = r.json.id as number;
      expect((await listsOf(acme, 'acme')).some((l) => l.id === id || l.name === 'globex private')).toBe(false);
      expectPlainError(await del(acme, `${CM}/acme/lists/${id}`), 404);
      expectPlainError(await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [id] }), 404);
      expect((await listsOf(globex, 'globex')).map((l) => l.id)).toEqual([id]);
    });
  });

  describe('scheduled campaigns', () => {
    const campaignLimits: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['a name of 50 characters', { name: world(50) }, { name: world(51) }],
      // A mask is a sender: printable ASCII, all an SMSC can send from (test/sender-addresses.test.ts has the rest).
      ['a mask of 11 characters', { mask: 'm'.repeat(11) }, { mask: 'm'.repeat(12) }],
      ['a mask of 1 character', { mask: 'm' }, { mask: '' }],
      ['an opt_out_response of 160 characters', { opt_out_response: world(160) }, { opt_out_response: world(161) }],
      ['a reply_response of 160 characters', { reply_response: world(160) }, { reply_response: world(161) }],
      ['a batch of 255 characters', { batch: world(255) }, { batch: world(256) }],
      ['an e-mail of 254 characters', { email: emailOf(254) }, { email: emailOf(255) }],
      ['content of 1 character', { content: '👋' }, { content: '' }],
      // As SMS Gateway v2 and Gateway v1 take for a message: longer content could never be sent.
      ['content of 1,600 characters', { content: world(1600) }, { content: world(1601) }],
      ['a schedule with an offset', { schedule: atOffset(Date.now() + DAY, -210) }, { schedule: '2030-13-01T00:00:00Z' }],
    ];
    for (const [what, ok, bad] of campaignLimits) {
      it(`accepts a campaign with ${what} and refuses one past it with 422`, async () => {
        const accepted = await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody(ok));
        expect(accepted.status, accepted.text).toBe(201);
        expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody(bad)), 422);
      });
    }

    it('accepts a campaign 59 days ahead and refuses one 61 days or ten years ahead with 422 naming the horizon', async () => {
      expect((await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ schedule: atOffset(Date.now() + 59 * DAY, 780) }))).status).toBe(201);
      for (const ahead of [61 * DAY, 3653 * DAY]) {
        const refused = await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ schedule: atOffset(Date.now() + ahead, 780) }));
        expectDefaultError(refused, 422);
        expect(refused.json.message).toMatch(/schedule is more than 60 days ahead/);
      }
    });

    it('refuses a leap-second schedule (23:59:60, valid RFC 3339) saying it is the leap second, not that the offset is missing', async () => {
      const says = 'schedule 2026-12-31T23:59:60Z is a leap second (second 60), which hermod cannot schedule at: give second 59 or the next minute';
      const refused = await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ schedule: '2026-12-31T23:59:60Z' }));
      expectDefaultError(refused, 422);
      expect(refused.json.message).toBe(says);
      const v2 = await acme.post('/rest/sms/v2/messages', { destination: handset(), content: 'Kia ora — 你好', scheduled: '2026-12-31T23:59:60Z' });
      expect(v2.status, v2.text).toBe(400);
      expect(v2.json.message).toBe(says.replace(/^schedule/, 'scheduled'));
    });

    it('refuses a campaign without name, schedule or members, or with empty members, with 422', async () => {
      for (const field of ['name', 'schedule', 'members']) {
        const body = campaignBody();
        delete body[field];
        expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, body), 422);
      }
      expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ members: [] })), 422);
    });

    it('refuses a campaign with neither content nor template, with both, or with an unknown placeholder, with 422', async () => {
      const neither = campaignBody();
      delete neither.content;
      expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, neither), 422);
      await setTemplate('acme', 'both-check', 'Привет, {{param1}}!');
      expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ template: 'both-check' })), 422);
      const unknown = await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ content: 'Kia ora {{first_name}} 👋🏽' }));
      expectDefaultError(unknown, 422);
      expect(unknown.json.message).toContain('{{first_name}}');
    });

    it('refuses a campaign whose reply or opt-out response holds a placeholder, which an answer to a reply would send unfilled, with 422 naming the field (trial)', async () => {
      for (const [field, text] of [
        ['reply_response', 'Ngā mihi, {{param1}} 🙏'],
        ['opt_out_response', 'Kua mutu {{ ingoa }} — no more messages'],
      ] as const) {
        const r = await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ [field]: text }));
        expectDefaultError(r, 422);
        expect(r.json.message).toContain(field);
      }
      const plain = await acme.post(
        `${CM}/acme/scheduled_campaigns`,
        campaignBody({ reply_response: 'Ngā mihi — {curly} is fine 🙏', opt_out_response: 'Kua mutu' }),
      );
      expect(plain.status, plain.text).toBe(201);
    });

    it('sends each member the content with its params and destination filled in, from the mask', async () => {
      const members = [
        { destination: handset(), param1: 'Ānaru 👋🏽', param2: '四七一一' },
        { destination: handset(), param1: 'Боря' },
        { destination: handset(), param2: '99 🎉' },
      ];
      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'ngā waehere — коды',
        schedule: atOffset(Date.now() - 1000, 13),
        mask: 'ACME',
        content: 'Kia ora {{param1}}, tō waehere {{ param2 }} mō {{destination}} — 你好',
        members,
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toEqual({ id: expect.any(Number) });
      expect(Number.isSafeInteger(r.json.id)).toBe(true);
      expect(r.headers.location).toBe(`${hermod.baseUrl}${CM}/acme/${r.json.id}/report`);

      await eventually(async () => (members.every((m) => deliveredTo(m.destination).length > 0) ? true : undefined));
      for (const m of members) {
        const got = deliveredTo(m.destination);
        expect(got).toHaveLength(1);
        expect(got[0]!.text).toBe(`Kia ora ${m.param1 ?? ''}, tō waehere ${m.param2 ?? ''} mō ${m.destination} — 你好`);
        expect(got[0]!.source).toBe('ACME');
      }
    });

    it('never sends a member whose filled-in message is over 1,600 characters: it is reported rejected, and the dry run drops it as too_long', async () => {
      const [long, short] = [handset(), handset()];
      const content = `${world(1590)}{{param1}}`;
      const members = [
        { destination: long, param1: 'Ānaru Te Whatahoro 👋🏽 — 你好世界 — Привет, мир!!' },
        { destination: short, param1: 'Mere' },
      ];
      const list = await createList(acme, 'acme', { name: 'roa rawa — 太长', members });
      expect(list.status, list.text).toBe(201);
      const dry = await hermod.cli(['campaigns', 'dry-run', 'acme', String(list.json.id), '--content', content]);
      expect(dry.code, dry.output).toBe(0);
      expect(JSON.parse(dry.output)).toMatchObject({
        members: 2,
        sendable: 1,
        droppedTotal: 1,
        droppedByReason: { too_long: 1 },
        dropped: [{ destination: long, reason: 'too_long' }],
      });

      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, { name: 'roa rawa — 太长', schedule: atOffset(Date.now() - 1000, 13), content, members });
      expect(r.status, r.text).toBe(201);
      const rows = await eventually(async () => {
        const got = await report(acme, 'acme', r.json.id);
        return got.length === 2 && got.every((row) => row.status === 'received' || row.status === 'rejected') ? got : undefined;
      });
      expect(Object.fromEntries(rows.map((row) => [row.mobile, row.status]))).toEqual({ [long]: 'rejected', [short]: 'received' });
      expect(deliveredTo(long)).toEqual([]);
      expect(deliveredTo(short)).toHaveLength(1);
      const shown = JSON.parse((await hermod.cli(['campaigns', 'show', 'acme', String(r.json.id)])).output);
      expect(shown).toMatchObject({ members: 2, failed: 1, remaining: 0 });
    });

    it("reports every message of a campaign as received, with dates in the schedule's offset", async () => {
      const members = [handset(), handset(), handset()];
      const before = Date.now();
      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'kua pūrongotia — 已报告',
        schedule: atOffset(before - 1000, 13 * 60),
        content: 'Ваша посылка в пути 📦',
        members: members.map((destination) => ({ destination })),
      });
      expect(r.status, r.text).toBe(201);
      const id = r.json.id as number;

      const rows = await eventually(async () => {
        const got = await report(acme, 'acme', id);
        return got.length === members.length && got.every((row) => row.status === 'received') ? got : undefined;
      });
      expect(rows.map((row) => row.mobile).sort()).toEqual([...members].sort());
      expect(new Set(rows.map((row) => row.message_id)).size).toBe(members.length);
      for (const row of rows) {
        expect(row).toEqual({
          list_name: 'kua pūrongotia — 已报告',
          message_id: expect.any(Number),
          mobile: expect.any(String),
          sent_date: expect.any(String),
          status: 'received',
          status_date: expect.any(String),
          timezone: '+13:00',
        });
        expect(Number.isSafeInteger(row.message_id)).toBe(true);
        for (const date of [row.sent_date, row.status_date]) {
          expect(date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+13:00$/);
          expect(Date.parse(date)).toBeGreaterThanOrEqual(before - 1000);
          expect(Date.parse(date)).toBeLessThanOrEqual(Date.now() + 1000);
        }
        expect(Date.parse(row.status_date)).toBeGreaterThanOrEqual(Date.parse(row.sent_date));
      }
    });

    it('reports a campaign scheduled at a negative offset in that offset', async () => {
      const destination = handset();
      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'Terre-Neuve',
        schedule: atOffset(Date.now() - 1000, -210),
        content: 'Bonjour, ça va? 🍁',
        members: [{ destination }],
      });
      expect(r.status, r.text).toBe(201);
      const [row] = await eventually(async () => {
        const got = await report(acme, 'acme', r.json.id);
        return got.length === 1 && got[0]!.status === 'received' ? got : undefined;
      });
      expect(row!.timezone).toBe('-03:30');
      expect(row!.status_date).toMatch(/-03:30$/);
      expect(row!.sent_date).toMatch(/-03:30$/);
    });

    it('drops invalid campaign members without strict validation, and refuses the campaign with it', async () => {
      const good = handset();
      const lenient = await acme.post(
        `${CM}/acme/scheduled_campaigns`,
        campaignBody({ strict_validation: false, members: [{ destination: 'nope' }, { destination: good }] }),
      );
      expect(lenient.status, lenient.text).toBe(201);
      expect(lenient.json.error_messages).toMatch(/1 invalid member dropped.*members\[0\]/);
      expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, campaignBody({ members: [{ destination: 'nope' }, { destination: good }] })), 422);
    });

    it("answers 404 with a DefaultError for the report of an unknown campaign, of another application's campaign, or of a non-integer id", async () => {
      expectDefaultError(await acme.get(`${CM}/acme/4242424242/report`), 404);
      const theirs = await globex.post(`${CM}/globex/scheduled_campaigns`, campaignBody({ name: 'globex anake — 私人' }));
      expect(theirs.status, theirs.text).toBe(201);
      expect((await globex.get(`${CM}/globex/${theirs.json.id}/report`)).status).toBe(200);
      const r = await acme.get(`${CM}/acme/${theirs.json.id}/report`);
      expectDefaultError(r, 404);
      expect(r.text).not.toContain('globex anake');
      for (const id of ['abc', '1.5', '-1', '0', '1e3', '9007199254740992']) expectDefaultError(await acme.get(`${CM}/acme/${id}/report`), 404);
    });
  });

  describe('templates', () => {
    it("lists the application's templates as id and name, and not another application's", async () => {
      const welcomeSet = await setTemplate('acme', 'welcome', 'Nau mai {{param1}}, ko {{destination}} tō nama 👋🏽');
      await setTemplate('globex', 'globex-secret', 'Муна — 秘密');
      const r = await acme.get(`${CM}/acme/templates`);
      expect(r.status, r.text).toBe(200);
      const welcome = (r.json as { id: number; name: string }[]).find((t) => t.name === 'welcome');
      expect(welcome).toEqual({ id: welcomeSet.id, name: 'welcome' });
      expect(Number.isSafeInteger(welcome!.id)).toBe(true);
      expect(r.json.some((t: { name: string }) => t.name === 'globex-secret')).toBe(false);
      expect((await globex.get(`${CM}/globex/templates`)).json).toEqual([{ id: expect.any(Number), name: 'globex-secret' }]);
    });

    it('refuses a template longer than a campaign may be (1,600 characters), and keeps one of 1,600', async () => {
      await setTemplate('acme', 'roa-rawa', world(1600));
      await expect(setTemplate('acme', 'roa-rawa', world(1601))).rejects.toMatchObject({ details: expect.stringMatching(/1600 characters/) });
    });

    it('sends a campaign from a template named by name or by id, filled in for each member', async () => {
      const { id } = await setTemplate('acme', 'reminder', 'He whakamaumahara mō {{param1}} ki {{destination}} — 提醒 ⏰');
      const [a, b] = [handset(), handset()];
      for (const [template, destination, param1] of [
        ['reminder', a, 'Ānaru 👋🏽'],
        [String(id), b, 'Боря'],
      ] as const) {
        const body = campaignBody({ schedule: atOffset(Date.now() - 1000, 0), template, members: [{ destination, param1 }] });
        delete body.content;
        const r = await acme.post(`${CM}/acme/scheduled_campaigns`, body);
        expect(r.status, r.text).toBe(201);
      }
      await eventually(async () => (deliveredTo(a).length > 0 && deliveredTo(b).length > 0 ? true : undefined));
      expect(deliveredTo(a).map((m) => m.text)).toEqual([`He whakamaumahara mō Ānaru 👋🏽 ki ${a} — 提醒 ⏰`]);
      expect(deliveredTo(b).map((m) => m.text)).toEqual([`He whakamaumahara mō Боря ki ${b} — 提醒 ⏰`]);
    });

    it("refuses a campaign naming an unknown template, or another application's, with 422", async () => {
      await setTemplate('globex', 'globex-secret', 'Муна — 秘密');
      for (const template of ['no-such-template', 'globex-secret']) {
        const body = campaignBody({ template });
        delete body.content;
        expectDefaultError(await acme.post(`${CM}/acme/scheduled_campaigns`, body), 422);
      }
    });
  });

  describe('opted-out handsets', () => {
    let stopped: string;
    beforeAll(async () => {
      stopped = handset();
      await optOut(stopped);
    });

    it('leaves a handset that replied STOP out of a list by default, and says so', async () => {
      const other = handset();
      const r = await createList(acme, 'acme', { name: 'kāore he whakakore', members: [{ destination: stopped }, { destination: other }] });
      expect(r.status, r.text).toBe(201);
      expect(r.json.error_messages).toMatch(/1 opted-out member (was|were) removed/);
      expect((await listsOf(acme, 'acme')).find((l) => l.id === r.json.id)?.members).toEqual([{ destination: other }]);
    });

    it('leaves a handset out of an existing list once it replies STOP', async () => {
      const later = handset();
      const other = handset();
      const r = await createList(acme, 'acme', { name: 'i mua i te STOP', members: [{ destination: later }, { destination: other }] });
      expect(r.status, r.text).toBe(201);
      await optOut(later);
      expect((await listsOf(acme, 'acme')).find((l) => l.id === r.json.id)?.members).toEqual([{ destination: other }]);
    });

    it('leaves a list out of GET lists, its Location answering 404, once every member has replied STOP, and shows it again when one opts back in', async () => {
      const [first, second] = [handset(), handset()];
      const r = await createList(acme, 'acme', {
        name: 'ka whakakore katoa — 全員',
        members: [{ destination: first, param1: 'Hēmi 👋🏽' }, { destination: second }],
      });
      expect(r.status, r.text).toBe(201);
      const alone = await createList(acme, 'acme', { name: 'ko ia anake', members: [{ destination: second }] });
      expect(alone.status, alone.text).toBe(201);
      await optOut(first);
      await optOut(second);
      // SPEC: a list has 1..1,000,000 members; a client that checks the answer refused every list with `members: []` in it.
      expect((await listsOf(acme, 'acme')).every((l) => l.members.length > 0)).toBe(true);
      expect((await listsOf(acme, 'acme')).some((l) => l.id === r.json.id)).toBe(false);
      const gone = await acme.get(new URL(r.headers.location as string).pathname);
      expect(gone.status, gone.text).toBe(404);
      expect(gone.json).toEqual({ code: 404, message: expect.any(String) });
      // Still there to delete.
      const deleted = await acme.post(`${CM}/acme/delete_multiple_lists`, { list_ids: [alone.json.id] });
      expect(deleted.json.list_ids, deleted.text).toEqual([alone.json.id]);
      await simulator.originate({ source: first, destination: '4000', text: 'START' });
      await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(first) ? undefined : true));
      const lists = await listsOf(acme, 'acme');
      expect(lists.find((l) => l.id === r.json.id)?.members).toEqual([{ destination: first, param1: 'Hēmi 👋🏽' }]);
      expect(lists.some((l) => l.id === alone.json.id)).toBe(false);
    });

    it('refuses a list whose every member opted out', async () => {
      const r = await createList(acme, 'acme', { name: 'никого не осталось', members: [{ destination: stopped }] });
      expect(r.status, r.text).toBe(422);
    });

    it('keeps a handset that replied STOP in a list with remove_opt_outs false', async () => {
      const other = handset();
      const r = await createList(acme, 'acme', {
        name: 'me ngā whakakore',
        remove_opt_outs: false,
        members: [{ destination: stopped }, { destination: other }],
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json).toEqual({ id: expect.any(Number) });
      expect((await listsOf(acme, 'acme')).find((l) => l.id === r.json.id)?.members).toEqual([{ destination: stopped }, { destination: other }]);
    });

    it('does not send a campaign to a handset that replied STOP, and leaves it out of the report and of its members', async () => {
      const other = handset();
      const sentBefore = deliveredTo(stopped).length;
      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'whai whakaaro',
        schedule: atOffset(Date.now() - 1000, 13),
        content: 'He tuku motuhake — 特价 🎁',
        members: [{ destination: stopped }, { destination: other }],
      });
      expect(r.status, r.text).toBe(201);
      expect(r.json.error_messages).toMatch(/1 opted-out member (was|were) removed/);
      const rows = await eventually(async () => {
        const got = await report(acme, 'acme', r.json.id);
        return got.length === 1 && got[0]!.status === 'received' ? got : undefined;
      });
      expect(rows[0]!.mobile).toBe(other);
      expect(deliveredTo(other)).toHaveLength(1);
      expect(deliveredTo(stopped)).toHaveLength(sentBefore);
      // The member left out is not one the campaign sends to: its counts add up to its members.
      const shown = JSON.parse((await hermod.cli(['campaigns', 'show', 'acme', String(r.json.id)])).output);
      expect(shown).toMatchObject({ members: 1, submitted: 1, failed: 0, blocked: 0, dead: 0, remaining: 0 });
    });

    it('with remove_opt_outs false still never sends to a handset that replied STOP, and reports it as blocked', async () => {
      const other = handset();
      const sentBefore = deliveredTo(stopped).length;
      const r = await acme.post(`${CM}/acme/scheduled_campaigns`, {
        name: 'kāore i tangohia',
        remove_opt_outs: false,
        schedule: atOffset(Date.now() - 1000, 13),
        content: 'He tuku motuhake — 特价 🎁',
        members: [{ destination: stopped }, { destination: other }],
      });
      expect(r.status, r.text).toBe(201);
      const rows = await eventually(async () => {
        const got = await report(acme, 'acme', r.json.id);
        return got.length === 2 && got.every((row) => ['received', 'blocked', 'rejected', 'failed', 'expired'].includes(row.status)) ? got : undefined;
      });
      expect(Object.fromEntries(rows.map((row) => [row.mobile, row.status]))).toEqual({ [stopped]: 'blocked', [other]: 'received' });
      expect(deliveredTo(stopped)).toHaveLength(sentBefore);
    });
  });

  describe('request bodies', () => {
    it('answers malformed JSON with 400, in plain text for the bulk delete', async () => {
      const raw = '{"name": "kua pakaru — сломан 💥", "members": [';
      for (const path of ['lists', 'scheduled_campaigns']) {
        expectDefaultError(await acme.request('POST', `${CM}/acme/${path}`, { raw }), 400);
      }
      expectPlainError(await acme.request('POST', `${CM}/acme/delete_multiple_lists`, { raw: '{"list_ids": [1,' }), 400);
      expectDefaultError(await acme.request('POST', `${CM}/acme/lists`, { raw: '' }), 400);
    });

    it('answers a body that is not JSON by content-type with 415', async () => {
      const headers = { 'content-type': 'text/csv' };
      const raw = JSON.stringify(listBody());
      expectDefaultError(await acme.request('POST', `${CM}/acme/lists`, { raw, headers }), 415);
      expectDefaultError(await acme.request('POST', `${CM}/acme/scheduled_campaigns`, { raw: JSON.stringify(campaignBody()), headers }), 415);
      expectPlainError(await acme.request('POST', `${CM}/acme/delete_multiple_lists`, { raw: '{"list_ids":[1]}', headers }), 415);
    });

    it('answers a list body larger than HERMOD_MAX_IMPORT_BYTES with 413 and keeps nothing of it', async () => {
      const members = Array.from({ length: 3000 }, () => ({ destination: handset() }));
      const body = JSON.stringify({ name: 'nui rawa — 太大', members });
      expect(body.length).toBeGreaterThan(MAX_IMPORT_BYTES);
      expectDefaultError(await acme.request('POST', `${CM}/acme/lists`, { raw: body }), 413);
      expectDefaultError(await acme.request('POST', `${CM}/acme/lists`, { raw: body, headers: { 'content-length': String(Buffer.byteLength(body)) } }), 413);
      expect((await listsOf(acme, 'acme')).some((l) => l.name === 'nui rawa — 太大')).toBe(false);
    });
  });
});
