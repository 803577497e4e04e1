import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient, type Client } from './support/https-client';
import type { HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

interface ReplyCall {
  app: string;
  json: { id: string; source: string; destination: string; content: string; reply_to?: string };
}

/**
 * Two tenants, `acme` and `beta`, message the same handsets; each has its own
 * reply callback. A reply must reach the tenant whose address the handset
 * answered, not whichever messaged the handset last.
 */
describe('reply routing between applications that message the same handset', () => {
  let hermod: HermodProcess;
  let simulator: SmscSimulator;
  let acme: Client;
  let beta: Client;
  let receiver: http.Server;
  let running: HermodWithSimulator;
  const replies: ReplyCall[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        replies.push({ app: (req.url ?? '').split('/')[1]!, json: JSON.parse(body) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;

    running = await startHermodWithSimulator('reply-routing', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' });
    ({ hermod, simulator, client: acme } = running);
    expect((await hermod.cli(['apps', 'create', 'beta', '--password', 'beta-secret'])).code).toBe(0);
    expect((await hermod.cli(['apps', 'set-callbacks', 'acme', '--reply', `http://localhost:${port}/acme/reply`])).code).toBe(0);
    expect((await hermod.cli(['apps', 'set-callbacks', 'beta', '--reply', `http://localhost:${port}/beta/reply`])).code).toBe(0);
    beta = createClient(hermod.baseUrl, hermod.ca(), { user: 'beta', pass: 'beta-secret' });
  }, 120_000);

  afterAll(async () => {
    beta?.close();
    await running?.stop();
    receiver?.close();
  });

  const statusOf = async (client: Client, id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status as string | undefined;
  /** Sends and waits until the handset has it, so the send is on record before the handset answers. */
  const send = async (client: Client, body: { destination: string; source?: string; content: string }): Promise<string> => {
    const sent = await client.post('/rest/sms/v2/messages', body);
    expect(sent.status).toBe(202);
    await eventually(async () => ((await statusOf(client, sent.json.id)) === 'received' ? true : undefined));
    return sent.json.id as string;
  };
  const repliesFrom = (handset: string) => replies.filter((r) => r.json.source === handset);
  /** The log line core wrote when it routed the reply with this id. */
  const routedLine = (id: string) =>
    hermod
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"reply routed"') && l.includes(`"id":"${id}"`))
      .map((l) => JSON.parse(l) as { application: string; rule: string });

  it('gives each application only the reply to the address it sent from, though the other messaged the handset last', async () => {
    const handset = '+6421500001';
    const fromAcme = await send(acme, { destination: handset, source: '4001', content: 'Kua rāhuitia tō tēpu — your table is booked 🍽️' });
    const fromBeta = await send(beta, { destination: handset, source: '4002', content: 'Ваша посылка в пути 📦' });

    await simulator.originate({ source: handset, destination: '4001', text: 'Kia ora, e hoa mā' });
    await simulator.originate({ source: handset, destination: '4002', text: '你好' });
    await eventually(async () => (repliesFrom(handset).length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));

    const calls = repliesFrom(handset);
    expect(calls.filter((c) => c.app === 'acme').map((c) => c.json)).toEqual([
      expect.objectContaining({ content: 'Kia ora, e hoa mā', destination: '4001', reply_to: fromAcme }),
    ]);
    expect(calls.filter((c) => c.app === 'beta').map((c) => c.json)).toEqual([
      expect.objectContaining({ content: '你好', destination: '4002', reply_to: fromBeta }),
    ]);

    // Each reply is its application's message, and only its.
    const acmeReply = calls.find((c) => c.app === 'acme')!.json.id;
    expect((await acme.get(`/rest/sms/v2/messages?id=${acmeReply}`)).json).toMatchObject({ direction: 'MO', content: 'Kia ora, e hoa mā' });
    expect((await beta.get(`/rest/sms/v2/messages?id=${acmeReply}`)).status).toBe(404);
    expect(routedLine(acmeReply)).toEqual([expect.objectContaining({ rule: 'only-sender-from-address' })]);
  });

  it('tells two applications sharing a short code apart by which last messaged the handset from it', async () => {
    const [one, two] = ['+6421500002', '+6421500003'];
    await send(acme, { destination: one, source: '4100', content: '提醒：明天十点看牙医' });
    await send(beta, { destination: two, source: '4100', content: 'Напоминание: заберите заказ в 3 👋🏽' });

    await simulator.originate({ source: one, destination: '4100', text: '👍' });
    await simulator.originate({ source: two, destination: '4100', text: 'Привет 👍' });
    const first = await eventually(async () => repliesFrom(one)[0]);
    const second = await eventually(async () => repliesFrom(two)[0]);
    expect(first).toMatchObject({ app: 'acme', json: { content: '👍' } });
    expect(second).toMatchObject({ app: 'beta', json: { content: 'Привет 👍' } });
    expect(routedLine(first.json.id)).toEqual([expect.objectContaining({ rule: 'last-message-from-address' })]);
  });

  it('makes one reply and one callback of a deliver_sm the carrier sends twice', async () => {
    const handset = '+6421500004';
    await send(acme, { destination: handset, source: '4001', content: 'Me pēhea mātou? 1–5 ⭐' });
    const reply = { source: handset, destination: '4001', text: 'Kia ora, e hoa mā — 5 👍', userMessageReference: 77 };
    await simulator.originate(reply);
    await simulator.originate(reply);
    await eventually(async () => (repliesFrom(handset).length >= 1 ? true : undefined));
    await eventually(async () => (hermod.output().includes('"msg":"dropped a redelivered reply"') ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    expect(repliesFrom(handset)).toHaveLength(1);
    expect(
      hermod
        .output()
        .split('\n')
        .filter((l) => l.includes('"msg":"reply routed"') && l.includes(`"source":"${handset}"`)),
    ).toHaveLength(1);

    // A new message from the handset (its own new reference) is a new reply, even with the same text.
    await simulator.originate({ ...reply, userMessageReference: 78 });
    await eventually(async () => (repliesFrom(handset).length === 2 ? true : undefined));

    // A long reply, in several parts, delivered twice with the same concatenation reference.
    const long = { source: handset, destination: '4001', text: 'Kia ora, e hoa mā — tēnā koe! 你好世界, Привет 👋🏽🎉 '.repeat(3), concatReference: 42 };
    expect(await simulator.originate(long)).toBeGreaterThan(1);
    await simulator.originate(long);
    await eventually(async () => (repliesFrom(handset).length === 3 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    expect(repliesFrom(handset).map((r) => r.json.content)).toEqual([reply.text, reply.text, long.text]);
  });

  it('opts a handset out only of the application whose address it sent STOP to', async () => {
    const handset = '+6421500005';
    await send(acme, { destination: handset, source: '4001', content: 'Hoko nui i tēnei rā! 🎉' });
    await send(beta, { destination: handset, source: '4002', content: '您的订单已发货 📦' });
    await simulator.originate({ source: handset, destination: '4001', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined));
    expect((await hermod.cli(['optouts', 'list', 'beta'])).output).not.toContain(handset);

    const blocked = await acme.post('/rest/sms/v2/messages', { destination: handset, source: '4001', content: 'Kei reira tonu koe? 👋🏽' });
    await eventually(async () => ((await statusOf(acme, blocked.json.id)) === 'blocked' ? true : undefined));
    await send(beta, { destination: handset, source: '4002', content: 'Delivered: tēnā koe' });
  });

  it('gives a START on a shared short code to the application the handset opted out of, though another messaged it from there since', async () => {
    const handset = '+6421500020';
    await send(beta, { destination: handset, source: '4200', content: 'Hoko nui! Reply STOP to opt out — 回复STOP退订' });
    await simulator.originate({ source: handset, destination: '4200', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'beta'])).output.includes(handset) ? true : undefined));
    // acme's reminder is now the last message to the handset from 4200: a plain reply answers it.
    await send(acme, { destination: handset, source: '4200', content: 'Whakamaumahara: tō wā ki te tākuta āpōpō 🩺' });
    await simulator.originate({ source: handset, destination: '4200', text: 'START' });
    // It went to acme, which had nothing to opt the handset back into: beta's opt-out stood for good.
    const start = await eventually(async () => repliesFrom(handset).find((r) => r.json.content === 'START'));
    expect(start.app).toBe('beta');
    expect(routedLine(start.json.id)).toEqual([expect.objectContaining({ rule: 'opted-out-from-address' })]);
    await eventually(async () => (!(await hermod.cli(['optouts', 'list', 'beta'])).output.includes(handset) ? true : undefined));
    await send(beta, { destination: handset, source: '4200', content: 'Nau mai anō — 欢迎回来' });
    // A plain reply still answers the last message from the address.
    await simulator.originate({ source: handset, destination: '4200', text: 'Ka pai, ka kite 👋🏽' });
    expect((await eventually(async () => repliesFrom(handset).find((r) => r.json.content === 'Ka pai, ka kite 👋🏽'))).app).toBe('beta');
  });

  it('gives a YES on a shared short code to the application whose question it answers, not to one the handset opted out of', async () => {
    const handset = '+6421500021';
    await send(beta, { destination: handset, source: '4200', content: 'Hoko nui! Reply STOP to opt out' });
    await simulator.originate({ source: handset, destination: '4200', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'beta'])).output.includes(handset) ? true : undefined));
    const question = await send(acme, { destination: handset, source: '4200', content: 'Tō wā ki te tākuta āpōpō 10 karaka. Reply YES to confirm' });
    await simulator.originate({ source: handset, destination: '4200', text: 'Yes' });
    // It went to beta and opted the handset back in there; acme never heard its answer.
    const yes = await eventually(async () => repliesFrom(handset).find((r) => r.json.content === 'Yes'));
    expect(yes).toMatchObject({ app: 'acme', json: { reply_to: question } });
    expect(routedLine(yes.json.id)).toEqual([expect.objectContaining({ rule: 'last-message-from-address' })]);
    expect((await hermod.cli(['optouts', 'list', 'beta'])).output).toContain(handset);
  });

  it('takes a STOP from a number without its plus and a START with it as one handset, in hot state and in history', async () => {
    const digits = '6421500016';
    await send(acme, { destination: `+${digits}`, source: '4001', content: 'Kia ora — he hoko hou 🛍️' });
    // The carrier hands the reply's sender over without its plus (type of number unknown).
    await simulator.originate({ source: digits, destination: '4001', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(digits) ? true : undefined));
    // However the application writes the number, it is the handset that said STOP.
    for (const destination of [digits, `+${digits}`]) {
      const sent = await acme.post('/rest/sms/v2/messages', { destination, source: '4001', content: `Kei reira tonu koe? ${destination} 👋🏽` });
      await eventually(async () => ((await statusOf(acme, sent.json.id)) === 'blocked' ? true : undefined));
    }
    await simulator.originate({ source: `+${digits}`, destination: '4001', text: 'START' });
    // History, which hot state is loaded from at the next start, has the handset opted in again.
    await eventually(async () => (!(await hermod.cli(['optouts', 'list', 'acme'])).output.includes(digits) ? true : undefined));
    await send(acme, { destination: digits, source: '4001', content: 'Nau mai anō — 欢迎回来' });
  });

  it('opts a handset out again when it sends STOP, START and STOP within minutes, with no carrier reference', async () => {
    const handset = '+6421500021';
    await send(acme, { destination: handset, source: '4001', content: 'Hoko nui — 大减价 🎉' });
    const optedOut = async () => (await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset);
    await simulator.originate({ source: handset, destination: '4001', text: 'STOP' });
    await eventually(async () => ((await optedOut()) ? true : undefined));
    await simulator.originate({ source: handset, destination: '4001', text: 'START' });
    await eventually(async () => (!(await optedOut()) ? true : undefined));
    // The person, not the carrier, says STOP again: the same text to the same address inside the dedup window.
    await simulator.originate({ source: handset, destination: '4001', text: 'STOP' });
    await eventually(async () => ((await optedOut()) ? true : undefined));
    const blocked = await acme.post('/rest/sms/v2/messages', { destination: handset, source: '4001', content: 'Kei reira tonu koe? 👋🏽' });
    await eventually(async () => ((await statusOf(acme, blocked.json.id)) === 'blocked' ? true : undefined));
  });

  it('takes the same words from a handset again as a new reply once the application has messaged it since', async () => {
    const handset = '+6421500022';
    await send(acme, { destination: handset, source: '4001', content: 'Will you come on Friday? Reply YES or NO' });
    await simulator.originate({ source: handset, destination: '4001', text: 'Āe 👍🏽' });
    await eventually(async () => (repliesFrom(handset).length === 1 ? true : undefined));
    await send(acme, { destination: handset, source: '4001', content: 'And on Saturday? 土曜日は？' });
    await simulator.originate({ source: handset, destination: '4001', text: 'Āe 👍🏽' });
    await eventually(async () => (repliesFrom(handset).length === 2 ? true : undefined));
    expect(repliesFrom(handset).map((r) => r.json.content)).toEqual(['Āe 👍🏽', 'Āe 👍🏽']);
  });

  it('takes a STOP to an address nobody had messaged from, and then the same STOP once an application has, as two replies', async () => {
    const handset = '+6421500023';
    await simulator.originate({ source: handset, destination: '4009', text: 'STOP' });
    await eventually(async () => (hermod.output().includes(`"msg":"reply matches no application"`) && hermod.output().includes(handset) ? true : undefined));
    const claimed = await hermod.cli(['apps', 'set-sources', 'acme', '4009']);
    expect(claimed.code).toBe(0);
    await send(acme, { destination: handset, source: '4009', content: 'Nau mai — welcome 🎉' });
    await simulator.originate({ source: handset, destination: '4009', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined));
  });

  it('gives replies to an address an operator claimed to that application, and refuses a claim on an address another holds', async () => {
    const claimed = await hermod.cli(['apps', 'set-sources', 'beta', '4300', 'BetaShop']);
    expect(claimed).toMatchObject({ code: 0 });
    const refused = await hermod.cli(['apps', 'set-sources', 'acme', '4300']);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/4300 is already claimed by another application/);
    expect((await hermod.cli(['apps', 'list'])).output).toMatch(/beta\t\S+\tset\t-\tdefault\t4300 BetaShop/);

    const handset = '+6421500006';
    // beta holds the claim: acme may not send from it (its customers' replies, STOP too, would go to beta).
    const taken = await acme.post('/rest/sms/v2/messages', { destination: handset, source: '4300', content: 'Kia ora mai i a acme 👋🏽' });
    expect(taken.status).toBe(400);
    expect(taken.json.message).toMatch(/source 4300 is claimed by another application/);
    const masked = await acme.post('/rest/sms/v2/messages', { destination: handset, mask: 'betashop', content: 'Kia ora mai i a acme 👋🏽' });
    expect(masked.status).toBe(400);
    const broadcast = await acme.post('/rest/gateway/messages/broadcast', { destination: [handset, '+6421500007'], content: 'Kia ora 👋🏽', mask: 'BetaShop' });
    expect(broadcast.status, broadcast.text).toBe(400);
    expect(broadcast.json).toMatchObject({ error: 'invalid_attrib', message: expect.stringMatching(/mask BetaShop is claimed by another application/) });
    const campaign = await acme.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Hoko ✨',
      schedule: new Date(Date.now() + 86_400_000).toISOString().slice(0, 19) + 'Z',
      content: 'Kia ora {{param1}} 🛍️',
      mask: 'BetaShop',
      members: [{ destination: handset, param1: 'Mere' }],
    });
    expect(campaign.status, campaign.text).toBe(422);
    expect(campaign.text).toMatch(/mask BetaShop is claimed by another application/);
    // A handset nobody messaged from 4300 texts it: the claimant's.
    await simulator.originate({ source: handset, destination: '4300', text: 'Who is this? 你好' });
    const reply = await eventually(async () => repliesFrom(handset)[0]);
    expect(reply).toMatchObject({ app: 'beta', json: { content: 'Who is this? 你好', destination: '4300' } });
    expect(reply.json.reply_to).toBeUndefined();
    expect(routedLine(reply.json.id)).toEqual([expect.objectContaining({ rule: 'claimed-address' })]);
    // beta's own message from it is answered by the next reply.
    const sent = await send(beta, { destination: handset, source: '4300', content: 'Ko BetaShop tēnei 🛍️' });
    await simulator.originate({ source: handset, destination: '4300', text: 'Ka pai, kia ora' });
    const answer = await eventually(async () => repliesFrom(handset)[1]);
    expect(answer).toMatchObject({ app: 'beta', json: { content: 'Ka pai, kia ora', reply_to: sent } });
  });
});
