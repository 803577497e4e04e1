import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

describe('hermod status, on a running service', () => {
  let h: HermodWithSimulator;
  beforeAll(async () => {
    h = await startHermodWithSimulator('cli-status', {});
  }, 90_000);
  afterAll(() => h?.stop());

  it('prints the backlog of each topic, the SMS bind and the callbacks, as the console shows them', async () => {
    const sent = await h.client.post('/rest/sms/v2/messages', { destination: '+64211234599', content: 'Kia ora — he aha te tūnga? 📊' });
    expect(sent.status).toBe(202);
    await eventually(async () => ((await h.client.get(`/rest/sms/v2/messages?id=${sent.json.id}`)).json.status === 'received' ? true : undefined), 20_000);
    const status = await eventually(async () => {
      const r = await h.hermod.cli(['status']);
      // The bind is reported every second: once it shows up.
      return r.code === 0 && /\nsms\t[^\t]+\t[^\t]+\tup\t0\/256\t/.test(r.stdout) ? r : undefined;
    }, 15_000);
    const lines = status.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual(['backlog', 'topic\tgroup\trecords']);
    expect(lines).toContain('hermod.sms.v1\tsms-workers\t0');
    expect(lines).toContain('binds');
    expect(lines).toContain('callbacks');
    expect(lines).toContain('application\towed\tdelivered\tfailed tries\tfailed\tlast error');
    expect(status.stderr).toBe('');
  }, 60_000);

  it('takes no arguments', async () => {
    const r = await h.hermod.cli(['status', 'all']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unexpected argument "all": "status" takes none');
  }, 30_000);
});
