import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGE_STATUSES, stageOf } from '../core/domain/message-status';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

/** Report statuses a message ends in: `sent` and `submitted` come before its receipt. */
const FINAL = new Set<string>(MESSAGE_STATUSES.filter((s) => stageOf(s) >= stageOf('received')));

describe('replies to campaign messages', () => {
  let h: HermodWithSimulator;
  const delivered: { destination: string; text: string; source: string }[] = [];
  const to = (handset: string) => delivered.filter((m) => m.destination.replace(/^\+/, '') === handset.replace(/^\+/, ''));

  /** Status callbacks acme's receiver got: Campaign Manager sends none (SPEC.md §6.3), SMS Gateway v2 does. */
  const callbacks: { id: string; status: string }[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      callbacks.push(JSON.parse(body));
      res.writeHead(200).end();
    });
  });

  beforeAll(async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    h = await startHermodWithSimulator('campaign-replies', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' });
    const port = (receiver.address() as { port: number }).port;
    expect((await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${port}/status`])).code).toBe(0);
    h.simulator.on('message', (m: { destination: string; text: string; source: string }) => delivered.push(m));
    const created = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Hoko o te kōanga 🌸',
      schedule: new Date().toISOString(),
      content: 'Hoko o te kōanga, {{param1}}! 🎉 Reply STOP to opt out',
      // A sender: printable ASCII, all an SMSC can send from.
      mask: 'SHOP',
      reply_response: 'Ngā mihi mō tō whakautu — 谢谢, до встречи 👋🏽',
      opt_out_response: 'Kāore koe e whiwhi karere anō — больше никаких сообщений 🙏🏽',
      members: [
        { destination: '+6427000001', param1: 'Ānaru' },
        { destination: '+6427000002', param1: '小明' },
        { destination: '+6427000004', param1: 'Hēmi' },
      ],
    });
    expect(created.status).toBe(201);
    await eventually(async () => (['+6427000001', '+6427000002', '+6427000004'].every((m) => to(m).length === 1) ? true : undefined), 30_000);
  });

  afterAll(async () => {
    await h?.stop();
    receiver.close();
  });

  it('sends the campaign from its mask with each member’s parameters filled in', () => {
    expect(to('+6427000001')[0]).toMatchObject({ source: 'SHOP', text: 'Hoko o te kōanga, Ānaru! 🎉 Reply STOP to opt out' });
    expect(to('+6427000002')[0]!.text).toBe('Hoko o te kōanga, 小明! 🎉 Reply STOP to opt out');
  });

  it('answers a reply with the campaign’s reply_response', async () => {
    await h.simulator.originate({ source: '+6427000001', destination: 'SHOP', text: 'Kei te tuwhera koutou i te Rātapu? 周日营业吗?' });
    const answer = await eventually(async () => to('+6427000001').find((m) => m.text.startsWith('Ngā mihi mō tō whakautu')), 20_000);
    expect(answer.source).toBe('SHOP');
  });

  it('answers a reply to its own answer no more: one reply_response to a conversation, not one a message', async () => {
    await eventually(async () => to('+6427000001').find((m) => m.text.startsWith('Ngā mihi mō tō whakautu')), 20_000);
    // A reply to the answer was followed back to the campaign and answered again: two auto-responders would never stop.
    await h.simulator.originate({ source: '+6427000001', destination: 'SHOP', text: 'Ka pai — 好的 👍🏽' });
    await new Promise((r) => setTimeout(r, 3000));
    expect(to('+6427000001').filter((m) => m.text.startsWith('Ngā mihi mō tō whakautu'))).toHaveLength(1);
  });

  it('answers a STOP that came after the campaign’s answer to an earlier reply with the opt_out_response', async () => {
    // The handset's last message from SHOP is then the reply_response, not the campaign's own: the STOP answers that.
    await h.simulator.originate({ source: '+6427000004', destination: 'SHOP', text: 'He aha ngā hāora? 营业时间?' });
    await eventually(async () => to('+6427000004').find((m) => m.text.startsWith('Ngā mihi mō tō whakautu')), 20_000);
    await h.simulator.originate({ source: '+6427000004', destination: 'SHOP', text: 'STOP' });
    const answer = await eventually(
      async () => to('+6427000004').find((m) => m.text === 'Kāore koe e whiwhi karere anō — больше никаких сообщений 🙏🏽'),
      20_000,
    );
    expect(answer.source).toBe('SHOP');
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6427000004') ? true : undefined));
  });

  it('answers STOP with the opt_out_response and opts the handset out', async () => {
    await h.simulator.originate({ source: '+6427000002', destination: 'SHOP', text: 'STOP' });
    await eventually(async () => to('+6427000002').find((m) => m.text === 'Kāore koe e whiwhi karere anō — больше никаких сообщений 🙏🏽'), 20_000);
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6427000002') ? true : undefined));
    // A later campaign leaves the opted-out handset out (remove_opt_outs defaults to true).
    const later = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Hoko o te raumati ☀️',
      schedule: new Date().toISOString(),
      content: 'Hoko o te raumati! 夏季特卖 ☀️',
      // The same handset as a contact list may write it: with the international prefix 00, or without its plus.
      // The first of its spellings is the one kept; the others are the same handset, removed as duplicates.
      members: [{ destination: '+6427000001' }, { destination: '006427000002' }, { destination: '+6427000002' }, { destination: '6427000002' }],
    });
    expect(later.status).toBe(201);
    expect(later.json.error_messages).toMatch(/2 duplicate members were removed.*; 1 opted-out member was removed/);
    await eventually(async () => (to('+6427000001').some((m) => m.text === 'Hoko o te raumati! 夏季特卖 ☀️') ? true : undefined), 20_000);
    const report = await eventually(async () => {
      const r = await h.client.get(`/rest/campaign_manager/v1/acme/${later.json.id}/report`);
      return r.json?.length === 1 && r.json[0].status === 'received' ? r.json : undefined;
    }, 20_000);
    expect(report[0].mobile).toBe('+6427000001');
    expect(to('+6427000002').some((m) => m.text === 'Hoko o te raumati! 夏季特卖 ☀️')).toBe(false);
  });

  it('ends the message of a member who replied STOP after the campaign was scheduled blocked, in its report and its counts', async () => {
    const scheduled = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Hoko o te takurua ❄️',
      schedule: new Date(Date.now() + 5000).toISOString(),
      content: 'Hoko o te takurua — 冬季特卖 ❄️',
      mask: 'SHOP',
      members: [{ destination: '+6427000005' }, { destination: '+6427000006' }],
    });
    expect(scheduled.status, scheduled.text).toBe(201);
    await h.simulator.originate({ source: '+6427000005', destination: 'SHOP', text: 'STOP' });
    await eventually(async () => ((await h.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6427000005') ? true : undefined));
    // It was left out without a word: the report had one row, and `members` 2 counted 1 submitted and nothing else.
    const report = await eventually(async () => {
      const r = await h.client.get(`/rest/campaign_manager/v1/acme/${scheduled.json.id}/report`);
      return r.json?.length === 2 && r.json.every((row: { status: string }) => FINAL.has(row.status)) ? r.json : undefined;
    }, 30_000);
    expect(Object.fromEntries(report.map((row: { mobile: string; status: string }) => [row.mobile, row.status]))).toEqual({
      '+6427000005': 'blocked',
      '+6427000006': 'received',
    });
    const shown = await h.hermod.cli(['campaigns', 'show', 'acme', String(scheduled.json.id)]);
    expect(JSON.parse(shown.output)).toMatchObject({ state: 'finished', members: 2, submitted: 1, delivered: 1, blocked: 1, remaining: 0 });
    expect(to('+6427000005')).toEqual([]);
  });

  it('posts no status callback for the campaign or its answers to replies, while a v2 send beside them gets its own', async () => {
    const v2 = await h.client.post('/rest/sms/v2/messages', { destination: '+6427000003', content: 'Kia ora — he karere v2 🌿' });
    expect(v2.status).toBe(202);
    await eventually(async () => (callbacks.some((c) => c.id === v2.json.id && c.status === 'received') ? true : undefined), 20_000);
    expect(callbacks.filter((c) => c.id !== v2.json.id)).toEqual([]);
  });
});

describe('replies to a campaign sent, and answered, before a restart of in-process state', () => {
  let h: HermodWithSimulator | undefined;
  afterAll(() => h?.stop());

  it('answers STOP with the campaign’s opt_out_response and opts the handset out', async () => {
    h = await startHermodWithSimulator('campaign-restart');
    const delivered: { destination: string; text: string; source: string }[] = [];
    h.simulator.on('message', (m: { destination: string; text: string; source: string }) => delivered.push(m));
    const created = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'Rā whānau 🎂',
      schedule: new Date().toISOString(),
      content: 'Hari huritau, {{param1}}! Reply STOP to opt out',
      mask: '4100',
      reply_response: 'Ka whakautu mātou āpōpō — 明天回复',
      opt_out_response: 'Kua mutu — 已退订 🙏🏽',
      members: [{ destination: '+6428000005', param1: 'Mere' }],
    });
    expect(created.status, created.text).toBe(201);
    await eventually(async () => (delivered.some((m) => m.text === 'Hari huritau, Mere! Reply STOP to opt out') ? true : undefined), 30_000);

    // A question answered before the restart: history's newest message to the handset from 4100 is that answer.
    await h.simulator.originate({ source: '+6428000005', destination: '4100', text: 'Ka taea e au te whakarerekē i te rā?' });
    await eventually(async () => (delivered.some((m) => m.text === 'Ka whakautu mātou āpōpō — 明天回复') ? true : undefined), 20_000);

    await h.restart();
    await h.simulator.originate({ source: '+6428000005', destination: '4100', text: 'STOP' });
    const answer = await eventually(async () => delivered.find((m) => m.text === 'Kua mutu — 已退订 🙏🏽'), 20_000);
    expect(answer.source).toBe('4100');
    await eventually(async () => ((await h!.hermod.cli(['optouts', 'list', 'acme'])).output.includes('+6428000005') ? true : undefined));
  });
});
