import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const CM = '/rest/campaign_manager/v1';
const MEMBERS = 1500;

interface ReportRow {
  message_id: number;
  mobile: string;
  sent_date: string;
  status: string;
  status_date: string;
}

/**
 * A long text goes as several parts, and the SMSC's receipt for the first
 * can come before it has answered the last part's submit (the simulator here
 * sends each receipt as it answers). hermod records the message `received`
 * before it can record `submitted`.
 */
describe('receipts that come before the carrier has answered every part', () => {
  let running: HermodWithSimulator;
  beforeAll(async () => {
    running = await startHermodWithSimulator('receipts-first', {}, { receiptDelayMs: 0 });
  });
  afterAll(async () => running?.stop());

  it("counts every campaign message as handed to the carrier and reports when it left, though each one's receipt came first", async () => {
    const schedule = new Date(Date.now() - 1000).toISOString().replace('Z', '+00:00');
    const members = Array.from({ length: MEMBERS }, (_, i) => ({ destination: `+6421770${String(i).padStart(3, '0')}` }));
    const r = await running.client.post(`${CM}/acme/scheduled_campaigns`, {
      name: 'Ngā hua o te rā — 今日特价 🍎',
      schedule,
      content: 'Kia ora {{destination}}, tēnā koe — 你好 🌿 '.repeat(4),
      members,
    });
    expect(r.status, r.text).toBe(201);
    const id = r.json.id as number;

    const rows = await eventually(async () => {
      const got = await running.client.get(`${CM}/acme/${id}/report`);
      const json = got.json as ReportRow[];
      return json.length === MEMBERS && json.every((row) => row.status === 'received') ? json : undefined;
    }, 30_000);
    for (const row of rows) {
      expect(row.sent_date, JSON.stringify(row)).not.toBe('');
      expect(Date.parse(row.sent_date)).toBeLessThanOrEqual(Date.parse(row.status_date) + 1000);
    }

    const shown = await eventually(async () => {
      const out = await running.hermod.cli(['campaigns', 'show', 'acme', String(id)]);
      const json = JSON.parse(out.output) as { submitted: number; delivered: number };
      return json.delivered === MEMBERS && json.submitted === MEMBERS ? json : undefined;
    }, 15_000).catch(async () => (await running.hermod.cli(['campaigns', 'show', 'acme', String(id)])).output);
    expect(shown).toMatchObject({ submitted: MEMBERS, delivered: MEMBERS });
  });

  it('keeps an SMS API message received when the answer to its submit comes after its receipt', async () => {
    const sent = await running.client.post('/rest/sms/v2/messages', {
      destination: '+64217719999',
      content: 'Tēnā koe 🌿 你好 — he roa tēnei karere. '.repeat(5),
    });
    expect(sent.status).toBe(202);
    const got = await eventually(async () => {
      const m = await running.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
      return m.json.status === 'received' ? m.json : undefined;
    });
    expect(got.status).toBe('received');
    // The late answer does not move it back.
    await new Promise((r) => setTimeout(r, 800));
    expect((await running.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status).toBe('received');
  });
});
