import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient, type Client } from './support/https-client';
import type { HermodProcess } from './support/hermod-process';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

describe('replies (MO), STOP and blocked sends', () => {
  let hermod: HermodProcess;
  let client: Client;
  let simulator: SmscSimulator;
  const delivered: { destination: string; text: string }[] = [];

  let running: HermodWithSimulator;

  beforeAll(async () => {
    // The carrier's country, for a handset it gives in its national format (the last test).
    running = await startHermodWithSimulator('mo', { HERMOD_SMPP_COUNTRY_CODE: '64' });
    ({ hermod, simulator, client } = running);
    simulator.on('message', (m: { destination: string; text: string }) => delivered.push(m));
  });

  afterAll(() => running?.stop());

  const statusOf = async (id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json.status as string;

  it('opts a handset out when it replies STOP, and ends later sends to it as blocked without sending them', async () => {
    const handset = '+6425000001';
    const first = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Hoko nui i tēnei rā! 🎉 Reply STOP to opt out' });
    await eventually(async () => ((await statusOf(first.json.id)) === 'received' ? true : undefined));

    await simulator.originate({ source: handset, destination: '4000', text: 'Stop' });
    await eventually(async () => {
      const listed = await hermod.cli(['optouts', 'list', 'acme']);
      return listed.output.includes(handset) ? true : undefined;
    });

    const later = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Kei te pēhea koe? 你好?' });
    expect(later.status).toBe(202);
    await eventually(async () => ((await statusOf(later.json.id)) === 'blocked' ? true : undefined));
    const other = await client.post('/rest/sms/v2/messages', { destination: '+6425000002', content: 'Привет — not opted out 👋🏽' });
    await eventually(async () => ((await statusOf(other.json.id)) === 'received' ? true : undefined));
    expect(delivered.some((m) => m.text === 'Kei te pēhea koe? 你好?')).toBe(false);
  });

  it('ends blocked a message scheduled before the handset replied STOP, at its time, without sending it', async () => {
    const handset = '+6425000004';
    const first = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Kia ora! Reply STOP to opt out' });
    await eventually(async () => ((await statusOf(first.json.id)) === 'received' ? true : undefined));
    const scheduled = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
    const promo = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Te hokonga nui — ā te Rāhoroi 📣', scheduled });
    expect(promo.status, promo.text).toBe(202);

    await simulator.originate({ source: handset, destination: '4000', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined));
    await eventually(async () => ((await statusOf(promo.json.id)) === 'blocked' ? true : undefined), 15_000);
    expect(delivered.some((m) => m.text === 'Te hokonga nui — ā te Rāhoroi 📣')).toBe(false);
  });

  it('opts a handset out when it replies STOP in full-width letters, as a CJK keyboard sends it', async () => {
    const handset = '+6425000003';
    const first = await client.post('/rest/sms/v2/messages', { destination: handset, content: '你好世界 — 回复 STOP 退订' });
    await eventually(async () => ((await statusOf(first.json.id)) === 'received' ? true : undefined));
    await simulator.originate({ source: handset, destination: '4000', text: 'ＳＴＯＰ！' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined));
  });

  it('opts out the handset a STOP came from when the carrier gives it in its national format, so the next send to its international number is blocked', async () => {
    const handset = '+6425000005';
    const first = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Kia ora! Reply STOP to opt out' });
    await eventually(async () => ((await statusOf(first.json.id)) === 'received' ? true : undefined));
    // As carriers in New Zealand give a local handset: type of number national, with the trunk prefix 0.
    await simulator.originate({ source: '025000005', sourceTon: 2, destination: '4000', text: 'STOP' });
    await eventually(async () => ((await hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined));
    const later = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Te hokonga nui 📣' });
    await eventually(async () => ((await statusOf(later.json.id)) === 'blocked' ? true : undefined));
    expect(delivered.some((m) => m.text === 'Te hokonga nui 📣')).toBe(false);
  });

  it('opts the handset back in when it replies START', async () => {
    const handset = '+6425000001';
    await simulator.originate({ source: handset, destination: '4000', text: 'START' });
    await eventually(async () => {
      const listed = await hermod.cli(['optouts', 'list', 'acme']);
      return listed.output.includes(handset) ? undefined : true;
    });
    const again = await client.post('/rest/sms/v2/messages', { destination: handset, content: 'Nau mai anō — welcome back 👋🏽' });
    await eventually(async () => ((await statusOf(again.json.id)) === 'received' ? true : undefined));
  });
});

describe('replies after a restart of in-process state', () => {
  let h: HermodWithSimulator | undefined;
  afterAll(() => h?.stop());

  it('still opts out a handset that replies STOP to a message sent before the restart, routed from history', async () => {
    h = await startHermodWithSimulator('mo-restart');
    expect((await h.hermod.cli(['apps', 'create', 'globex', '--password', 'kupuhuna-ā'])).code).toBe(0);
    const handset = '+6423000001';
    const sent = await h.client.post('/rest/sms/v2/messages', { destination: handset, content: 'Te hokonga nui 📣 — reply STOP to opt out', source: '5000' });
    expect(sent.status, sent.text).toBe(202);
    await eventually(async () => ((await h!.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined));

    await h.restart();
    // Since the restart another application sent from the same number, to someone else: it must not take acme's STOP.
    const globex = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'globex', pass: 'kupuhuna-ā' });
    expect((await globex.post('/rest/sms/v2/messages', { destination: '+6423000999', content: 'Kia ora', source: '5000' })).status).toBe(202);
    globex.close();
    // Written without its plus, as a carrier may hand the sender over.
    await h.simulator.originate({ source: handset.slice(1), destination: '5000', text: 'Stop' });
    await eventually(async () => ((await h!.hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined), 20_000);
    expect((await h.hermod.cli(['optouts', 'list', 'globex'])).output).not.toContain(handset);
    const later = await h.client.post('/rest/sms/v2/messages', { destination: handset, content: 'Kei te pēhea koe?' });
    await eventually(async () => ((await h!.client.get(`/rest/sms/v2/messages?id=${later.json.id}`)).json.status === 'blocked' ? true : undefined));
  });

  it('gives a STOP after the restart to the application whose message went to the handset, not to one whose send to it is only scheduled (trial)', async () => {
    h ??= await startHermodWithSimulator('mo-restart');
    expect((await h.hermod.cli(['apps', 'create', 'kāinga', '--password', 'kupuhuna-ō'])).code).toBe(0);
    const handset = '+6423000301';
    const sent = await h.client.post('/rest/sms/v2/messages', { destination: handset, content: 'Tō waehere: 1234 — reply YES 🔐', source: '5200' });
    expect(sent.status, sent.text).toBe(202);
    await eventually(async () => ((await h!.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined));
    // Another application on the same number has a promotion for this handset tomorrow: accepted, not yet sent.
    const kainga = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'kāinga', pass: 'kupuhuna-ō' });
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const promo = await kainga.post('/rest/sms/v2/messages', { destination: handset, content: 'Hoko nui āpōpō 🛍️', source: '5200', scheduled: tomorrow });
    expect(promo.status, promo.text).toBe(202);
    kainga.close();

    await h.restart();
    await h.simulator.originate({ source: handset, destination: '5200', text: 'STOP' });
    await eventually(async () => ((await h!.hermod.cli(['optouts', 'list', 'acme'])).output.includes(handset) ? true : undefined), 20_000);
    expect((await h.hermod.cli(['optouts', 'list', 'kāinga'])).output).not.toContain(handset);
  });

  it('gives a reply from a handset never messaged to the one application that sent from that number before the restart', async () => {
    h ??= await startHermodWithSimulator('mo-restart');
    const sent = await h.client.post('/rest/sms/v2/messages', { destination: '+6423000101', content: 'Nau mai ki te hui ✨', source: '5100' });
    expect(sent.status, sent.text).toBe(202);
    await eventually(async () => ((await h!.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined));

    await h.restart();
    // A new customer texts the number acme advertises: acme alone has sent from it, so the message is acme's.
    const newcomer = '+6423000202';
    await h.simulator.originate({ source: newcomer, destination: '5100', text: 'Kei hea te hui? 🙏' });
    const routed = () =>
      h!.hermod
        .output()
        .split('\n')
        .filter((l) => l.includes(`"source":"${newcomer}"`) && /"msg":"reply (routed|matches no application)"/.test(l))
        .map((l) => JSON.parse(l) as { msg: string; rule: string; application?: string });
    await eventually(async () => (routed().length > 0 ? true : undefined), 20_000);
    const acmeId = (await h.hermod.cli(['apps', 'list'])).output.match(/acme\s+(\S+)/)?.[1];
    expect(routed(), JSON.stringify({ routed: routed(), acmeId })).toEqual([
      expect.objectContaining({ msg: 'reply routed', rule: 'only-sender-from-address', application: acmeId }),
    ]);
  });
});
