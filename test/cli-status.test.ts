import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { metricsText } from '../bench/support/metrics-text';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { sumsBy } from './support/metric-samples';

describe('hermod status, on a running service', () => {
  let h: HermodWithSimulator;
  /** A receiver that takes every callback and answers none until the test ends: what hermod owes it piles up. */
  const held: http.ServerResponse[] = [];
  const receiver = http.createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // Tries that are not answered stay tries for the whole test, not retries, however slow the machine.
    h = await startHermodWithSimulator('cli-status', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true', HERMOD_CALLBACK_TIMEOUT: '5m' });
  }, 90_000);
  afterAll(async () => {
    for (const res of held) res.destroy();
    receiver.closeAllConnections();
    receiver.close();
    await h?.stop();
  });

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
    expect(lines).toContain('application\towed\tawaiting retry\tdelivered\tfailed tries\tfailed\tlast error');
    expect(status.stderr).toBe('');
  }, 60_000);

  it('counts as owed every callback its receiver has not answered yet, tried or not, as the metric hermod_callbacks_owed_per_application does', async () => {
    const port = (receiver.address() as AddressInfo).port;
    expect((await h.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${port}/status`])).code).toBe(0);
    for (const content of ['Kia ora e te whānau 👋🏽', 'ngā hū hou 你好', 'مرحبا']) {
      expect((await h.client.post('/rest/sms/v2/messages', { destination: '+64211234598', content })).status).toBe(202);
    }
    // Every status of the three messages is made (five each) and none answered: a steady count, read twice alike.
    const owedInMetric = async (): Promise<number> => {
      const text = await metricsText(`http://127.0.0.1:${h.hermod.metricsPort}/metrics`);
      return [...sumsBy(text, 'hermod_callbacks_owed_per_application', 'application').values()].reduce((n, v) => n + v, 0);
    };
    const owed = await eventually(async () => ((await owedInMetric()) === 15 ? 15 : undefined), 20_000);
    const r = await h.hermod.cli(['status']);
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.startsWith('acme\t'));
    // Each message's first callback being tried and the rest behind it, none answered: all owed, none waiting for a retry,
    // none delivered.
    expect(row?.split('\t').slice(0, 4)).toEqual(['acme', String(owed), '0', '0']);
  }, 60_000);

  it('takes no arguments', async () => {
    const r = await h.hermod.cli(['status', 'all']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unexpected argument "all": "status" takes none');
  }, 30_000);
});
