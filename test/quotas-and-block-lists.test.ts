import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { deleteRedisKeys, REDIS_URL } from './support/redis-keys';

const KIA_ORA = 'Kia ora, e hoa mā — tēnā koe 👋🏽';

describe('quotas and block lists: hermod with two gateways on Redis hot state and the SMSC simulator', () => {
  const prefix = `hermod-quotas-${randomUUID().slice(0, 8)}`;
  let run: HermodWithSimulator;
  let korero: Client;
  /** v2 status callbacks the applications received. */
  const callbacks: { id: string; status: string; detail: string }[] = [];
  let receiver: http.Server;
  /** Texts that reached the carrier, with how often. */
  const reached = new Map<string, number>();
  const reachedWith = (tag: string): number => [...reached].filter(([text]) => text.includes(tag)).reduce((n, [, count]) => n + count, 0);

  beforeAll(async () => {
    run = await startHermodWithSimulator('quotas', {
      HERMOD_GATEWAYS: '2',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      // The status callback receiver below listens on this machine.
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
    });
    run.simulator.on('message', (m: { text: string }) => reached.set(m.text, (reached.get(m.text) ?? 0) + 1));
    expect((await run.hermod.cli(['apps', 'create', 'kōrero', '--password', 'muna-ā'])).code).toBe(0);
    korero = createClient(run.hermod.baseUrl, run.hermod.ca(), { user: 'kōrero', pass: 'muna-ā' });
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        callbacks.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://localhost:${(receiver.address() as { port: number }).port}/status`;
    for (const app of ['acme', 'kōrero']) expect((await run.hermod.cli(['apps', 'set-callbacks', app, '--status', url])).code).toBe(0);
  });
  const callbackOf = (id: string, status: string) => eventually(async () => callbacks.find((c) => c.id === id && c.status === status));

  afterAll(async () => {
    korero?.close();
    await run?.stop();
    receiver?.close();
    await deleteRedisKeys(prefix);
  });

  const statusOf = (client: Client, id: string) => client.get(`/rest/sms/v2/messages?id=${id}`).then((r) => r.json as { status: string });
  const finalStatus = (client: Client, id: string) =>
    eventually(async () => {
      const m = await statusOf(client, id);
      return ['received', 'blocked', 'deficient', 'failed', 'rejected'].includes(m.status) ? m : undefined;
    }, 60_000);

  it('lets exactly N of N + 1 concurrent v2 sends through with a quota of N, ends the last deficient, and refuses v1 over quota', async () => {
    const quota = 12;
    const set = await run.hermod.cli(['apps', 'set-quota', 'acme', '--messages', String(quota), '--per', 'day']);
    expect(set.output).toContain(`quota of acme: ${quota} messages per day`);
    expect(set.code).toBe(0);
    expect((await run.hermod.cli(['apps', 'list'])).output).toMatch(new RegExp(`acme\\t.*\\t${quota}/day`));

    const tag = `quota-${randomUUID().slice(0, 6)}`;
    const sends = await Promise.all(
      Array.from({ length: quota + 1 }, (_, i) =>
        run.client.post('/rest/sms/v2/messages', { destination: `+6421${String(i).padStart(6, '0')}`, content: `${KIA_ORA} ${tag} ${i}` }),
      ),
    );
    expect(sends.map((s) => s.status)).toEqual(Array(quota + 1).fill(202));
    expect(sends.every((s) => s.json.status === 'accepted')).toBe(true);

    const finals = await Promise.all(sends.map((s) => finalStatus(run.client, s.json.id)));
    const statuses = finals.map((f) => f.status).sort();
    const deficient = sends.find((_, i) => finals[i]!.status === 'deficient')!;
    // The v2 callback's detail is the destination, as in the answer to the send.
    expect((await callbackOf(deficient.json.id, 'deficient')).detail).toBe(deficient.json.detail);
    expect(statuses.filter((s) => s === 'deficient')).toHaveLength(1);
    expect(statuses.filter((s) => s === 'received')).toHaveLength(quota);
    // Give a stray submit time to show up, then count what the carrier got.
    await new Promise((r) => setTimeout(r, 500));
    expect(reachedWith(tag)).toBe(quota);

    const v1 = await run.client.post('/rest/gateway/messages', { destination: '+6421999999', content: `${KIA_ORA} ${tag} v1` });
    expect(v1.status).toBe(403);
    expect(v1.json).toMatchObject({ code: 403, error: 'quota_exceeded', message: expect.stringContaining('quota') });

    expect((await run.hermod.cli(['apps', 'set-quota', 'acme', '--clear'])).code).toBe(0);
    const after = await run.client.post('/rest/sms/v2/messages', { destination: '+6421888888', content: `${KIA_ORA} ${tag} cleared` });
    expect((await finalStatus(run.client, after.json.id)).status).toBe('received');
    expect(reachedWith(tag)).toBe(quota + 1);
  });

  it('ends sends to a blocked prefix blocked with no submit, from a Māori-named application, on v2 and v1, and for everyone on the global list', async () => {
    const tag = `block-${randomUUID().slice(0, 6)}`;
    const added = await run.hermod.cli(['blocklist', 'add', '--app', 'kōrero', '+64 27']);
    expect(added.code).toBe(0);
    expect(added.output).toContain('added to the block list of kōrero: +6427');
    expect((await run.hermod.cli(['blocklist', 'add', '+8190'])).output).toContain('added to the global block list: +8190');
    expect((await run.hermod.cli(['blocklist', 'add', 'not-a-number'])).code).toBe(1);
    const listed = (await run.hermod.cli(['blocklist', 'list'])).output;
    expect(listed).toMatch(/kōrero\t\+6427\t/);
    expect(listed).toMatch(/\(all\)\t\+8190\t/);

    const content = `${KIA_ORA} 你好 ${tag}`;
    const blocked = await korero.post('/rest/sms/v2/messages', { destination: '+64271234567', content, mask: 'Korero' });
    expect(blocked.status).toBe(202);
    const global = await run.client.post('/rest/sms/v2/messages', { destination: '+819012345678', content: `${content} global` });
    const viaV1 = await korero.post('/rest/gateway/messages', { destination: '+64279876543', content: `${content} v1` });
    expect(viaV1.status).toBe(201);
    // Another application is not held by kōrero's list; kōrero still reaches numbers outside it.
    const otherApp = await run.client.post('/rest/sms/v2/messages', { destination: '+64271234567', content: `${content} acme` });
    const outside = await korero.post('/rest/sms/v2/messages', { destination: '+64211234567', content: `${content} outside`, mask: 'Korero' });

    const b = await finalStatus(korero, blocked.json.id);
    expect(b.status).toBe('blocked');
    expect((await callbackOf(blocked.json.id, 'blocked')).detail).toBe('+64271234567');
    expect((await finalStatus(run.client, global.json.id)).status).toBe('blocked');
    const v1Status = await eventually(async () => {
      const r = await korero.get(`/rest/gateway/messages/${viaV1.json[0]}`);
      return r.json?.status === 'blocked' ? r.json : undefined;
    });
    expect(v1Status.status).toBe('blocked');
    expect((await finalStatus(run.client, otherApp.json.id)).status).toBe('received');
    expect((await finalStatus(korero, outside.json.id)).status).toBe('received');
    await new Promise((r) => setTimeout(r, 500));
    expect(reachedWith(tag)).toBe(2);

    expect((await run.hermod.cli(['blocklist', 'remove', '--app', 'kōrero', '+6427'])).code).toBe(0);
    expect((await run.hermod.cli(['blocklist', 'remove', '+8190'])).code).toBe(0);
    expect((await run.hermod.cli(['blocklist', 'list'])).output).not.toMatch(/\+6427|\+8190/);
    const again = await korero.post('/rest/sms/v2/messages', { destination: '+64271234567', content: `${content} again` });
    expect((await finalStatus(korero, again.json.id)).status).toBe('received');
  });

  it('ends campaign members over the quota deficient and blocked members blocked in the report, and sends only the rest', async () => {
    const tag = `campaign-${randomUUID().slice(0, 6)}`;
    // An application of its own: a quota counts the hour's earlier sends, and the other tests sent some as kōrero.
    expect((await run.hermod.cli(['apps', 'create', 'tāone', '--password', 'muna-ō'])).code).toBe(0);
    const taone = createClient(run.hermod.baseUrl, run.hermod.ca(), { user: 'tāone', pass: 'muna-ō' });
    expect((await run.hermod.cli(['apps', 'set-quota', 'tāone', '--messages', '2', '--per', 'hour'])).code).toBe(0);
    expect((await run.hermod.cli(['blocklist', 'add', '--app', 'tāone', '+86139'])).code).toBe(0);
    const members = ['+64215550001', '+8613912345678', '+64215550002', '+64215550003', '+64215550004'];
    const r = await taone.post('/rest/campaign_manager/v1/tāone/scheduled_campaigns', {
      name: `ngā mema — 成员 ${tag}`,
      schedule: new Date(Date.now() - 1000).toISOString().slice(0, 19) + '+00:00',
      content: `${KIA_ORA} ${tag}`,
      members: members.map((destination) => ({ destination })),
    });
    expect(r.status, r.text).toBe(201);
    const rows = await eventually(async () => {
      const got = await taone.get(`/rest/campaign_manager/v1/tāone/${r.json.id}/report`);
      const list = got.json as { mobile: string; status: string }[];
      return Array.isArray(list) && list.length === members.length && list.every((row) => ['received', 'blocked', 'deficient'].includes(row.status))
        ? list
        : undefined;
    }, 60_000);
    const byStatus = (status: string) => rows.filter((row) => row.status === status).map((row) => row.mobile);
    expect(byStatus('blocked')).toEqual(['+8613912345678']);
    expect(byStatus('received')).toHaveLength(2);
    expect(byStatus('deficient')).toHaveLength(2);
    // The operator's view counts them as the report does: over the quota is not a carrier's failure.
    const shown = await run.hermod.cli(['campaigns', 'show', 'tāone', String(r.json.id)]);
    expect(shown.code, shown.output).toBe(0);
    expect(JSON.parse(shown.output)).toMatchObject({ members: 5, delivered: 2, blocked: 1, deficient: 2, failed: 0, remaining: 0 });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reachedWith(tag)).toBe(2);
    taone.close();
  });
});
