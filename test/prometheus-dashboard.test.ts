import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';
import { prometheusTool, startPrometheus, type PrometheusProcess } from './support/prometheus-process';

const DEPLOY = path.resolve(import.meta.dirname, '../deploy');
const tool = prometheusTool('prometheus');
const METRICS_TOKEN = 'k1a-0ra.tohu_~metrics+/=';

/** Every PromQL expression of the Grafana dashboard, with its panel's title. */
function dashboardQueries(): { title: string; expr: string }[] {
  const dashboard = JSON.parse(fs.readFileSync(path.join(DEPLOY, 'grafana/hermod-dashboard.json'), 'utf8')) as {
    panels: { title: string; targets?: { expr?: string }[] }[];
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).filter((t) => t.expr).map((t) => ({ title: p.title, expr: t.expr! })));
}

function alertExpressions(): { alert: string; expr: string }[] {
  const rules = parse(fs.readFileSync(path.join(DEPLOY, 'prometheus/hermod-alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return rules.groups.flatMap((g) => g.rules);
}

describe.skipIf(!tool.available)('Prometheus scraping a running hermod', () => {
  let running: HermodWithSimulator;
  let prometheus: PrometheusProcess;
  let receiver: http.Server;

  beforeAll(async () => {
    // A customer whose callback receiver is failing, so callback retries exist.
    receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(503).end()));
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    // Metrics behind a bearer token, as an operator whose metrics port others can reach would serve them.
    running = await startHermodWithSimulator('prometheus', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true', HERMOD_METRICS_TOKEN: METRICS_TOKEN });
    const set = await running.hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${(receiver.address() as AddressInfo).port}/status`]);
    expect(set.code).toBe(0);
    prometheus = await startPrometheus({
      targets: [`127.0.0.1:${running.hermod.metricsPort}`],
      ruleFiles: [path.join(DEPLOY, 'prometheus/hermod-alerts.yml')],
      bearerToken: METRICS_TOKEN,
    });
    // Counters must exist before the traffic for rate() to see it rise.
    await eventually(async () => ((await prometheus.query('up{job="hermod"} == 1')).length === 1 ? true : undefined), 60_000, 250);

    const texts = ['Kia ora, e hoa mā — tēnā koe', 'Привет', '你好世界', '👋🏽🎉'];
    for (let round = 0; round < 3; round++) {
      await Promise.all(texts.map((content, i) => running.client.post('/rest/sms/v2/messages', { destination: `+642100000${i}`, content })));
      await running.client.post('/rest/sms/v2/messages', { destination: 'not a number', content: 'x' });
      await new Promise((r) => setTimeout(r, 1500));
    }
    const campaign = await running.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
      name: 'metrics',
      schedule: new Date().toISOString(),
      content: 'Kia ora {{param1}}',
      members: Array.from({ length: 20 }, (_, n) => ({ destination: `+6422${String(n).padStart(6, '0')}`, param1: `hoa ${n}` })),
    });
    expect(campaign.status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await prometheus?.stop();
    await running?.stop();
    receiver?.close();
  });

  it.each(dashboardQueries())('answers the dashboard panel "$title" with data: $expr', async ({ expr }) => {
    const result = await eventually(
      async () => {
        const r = await prometheus.query(expr);
        return r.some((s) => Number.isFinite(Number(s.value[1]))) ? r : undefined;
      },
      60_000,
      1000,
    );
    expect(result.length).toBeGreaterThan(0);
  });

  it.each(alertExpressions())('evaluates the alert $alert without error', async ({ expr }) => {
    await prometheus.query(expr);
  });

  it('scrapes metrics with the bearer token of HERMOD_METRICS_TOKEN, which a request without it, or with another, is refused', async () => {
    expect(await prometheus.query('up{job="hermod"} == 1')).toHaveLength(1);
    const url = `http://127.0.0.1:${running.hermod.metricsPort}/metrics`;
    const bare = await fetch(url);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await bare.text()).not.toContain('hermod_');
    expect((await fetch(url, { headers: { authorization: 'Bearer k1a-0ra.tohu_~metricz+/=' } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: `Basic ${Buffer.from(`x:${METRICS_TOKEN}`).toString('base64')}` } })).status).toBe(401);
    const scraped = await fetch(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('hermod_http_requests_total');
  });

  it('sees the series the alerts are built on, with the labels they aggregate by', async () => {
    const has = (expr: string) =>
      eventually(async () => ((await prometheus.query(expr)).length > 0 ? true : undefined), 60_000, 1000).catch((err: Error) => {
        throw new Error(`no series for ${expr}: ${err.message}`);
      });
    await has('hermod_smpp_bind_up == 1');
    await has('hermod_callbacks_total{application!="", outcome="retry"} > 0');
    await has('hermod_callbacks_awaiting_retry{application!=""} > 0');
    await has('hermod_callbacks_owed_per_application{application!=""} > 0');
    await has('hermod_campaign_messages_total > 0');
    await has('hermod_campaigns_sending');
    await has('hermod_history_flush_failures_total');
    await has('hermod_http_requests_total{status="400"}');
    await has('hermod_bus_lag_unread_seconds{topic="hermod.sms.v1", group="sms-workers"} == 0');
  });
});
