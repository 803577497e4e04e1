import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { startHermod, type HermodProcess } from './support/hermod-process';
import { createClient, type Client } from './support/https-client';
import { samplesOf, type Sample } from './support/metric-samples';
import { childrenOf, roleOf } from './support/role-pids';

/** The pid of the gateway of this index (its HERMOD_ROLE_INDEX). */
const gatewayPid = (hermod: HermodProcess, index: number): number | undefined =>
  childrenOf(hermod.pid).find(
    (pid) => roleOf(pid) === 'gateway' && fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`HERMOD_ROLE_INDEX=${index}`),
  );

describe("the metrics of hermod start's processes", () => {
  let hermod: HermodProcess;
  let client: Client;
  let metrics: Client;

  beforeAll(async () => {
    hermod = await startHermod({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-metrics-')), env: { HERMOD_GATEWAYS: '2' } });
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    metrics = createClient(`http://127.0.0.1:${hermod.metricsPort}`);
  });

  afterAll(async () => {
    client?.close();
    metrics?.close();
    if (hermod) expect(await hermod.stop()).toBe(0);
  });

  const scrape = async (): Promise<Sample[]> => {
    const r = await metrics.get('/metrics');
    expect(r.status).toBe(200);
    return samplesOf(r.text);
  };
  /** Each gateway's count of 202 answers to v2 sends. */
  const acceptedBy = (samples: Sample[]): Map<string, number> =>
    new Map(
      samples
        .filter((s) => s.name === 'hermod_http_requests_total' && s.labels.status === '202' && s.labels.route === '/rest/sms/v2/messages')
        .map((s) => [s.labels.process!, s.value]),
    );
  const send = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100${String(i).padStart(5, '0')}`, content: `Kia ora ${i} — 你好 🌿` });
      expect(r.status).toBe(202);
    }
  };

  it("names each sample's process, so a role that restarts resets only its own counters, and a process's limit is its own", async () => {
    await send(20);
    let samples = await scrape();
    const up = samples.filter((s) => s.name === 'hermod_role_up');
    expect(up.map((s) => s.labels.process).sort()).toEqual(['core', 'gateway-0', 'gateway-1', 'smsc-simulator']);
    expect(up.every((s) => s.value === 1)).toBe(true);
    // Every sample says whose it is (the role up gauge is the supervisor's own, about each process).
    expect(samples.filter((s) => !s.labels.process)).toEqual([]);
    // A limit per process, not the processes' limits added up; a start time per process.
    const fds = samples.filter((s) => s.name === 'hermod_process_max_fds');
    expect(fds).toHaveLength(4);
    expect(new Set(fds.map((s) => s.value)).size).toBe(1);
    expect(samples.filter((s) => s.name === 'hermod_process_start_time_seconds')).toHaveLength(4);
    // Core runs the SMS workers here: an SMS receipt's latency is its, and no other process serves a 0 for it.
    expect([...new Set(samples.filter((s) => s.name.startsWith('hermod_smpp_receipt_latency_seconds')).map((s) => s.labels.process))]).toEqual(['core']);
    const before = acceptedBy(samples);
    expect([...before.values()].reduce((a, b) => a + b, 0)).toBe(20);

    // One gateway killed: the supervisor starts it again. Its own series starts over; the other's goes on counting.
    const killed = gatewayPid(hermod, 1)!;
    process.kill(killed, 'SIGKILL');
    await eventually(async () => {
      const pid = gatewayPid(hermod, 1);
      if (pid === undefined || pid === killed) return undefined;
      return (await scrape()).some((s) => s.name === 'hermod_role_up' && s.labels.process === 'gateway-1' && s.value === 1) || undefined;
    }, 60_000);
    await send(20);
    samples = await scrape();
    const after = acceptedBy(samples);
    expect(after.get('gateway-0')!).toBeGreaterThanOrEqual(before.get('gateway-0') ?? 0);
    // What each series gained, as Prometheus's increase() reads a series that went down as started over.
    const gained = ['gateway-0', 'gateway-1'].map((p) => {
      const [was, now] = [before.get(p) ?? 0, after.get(p) ?? 0];
      return now >= was ? now - was : now;
    });
    expect(gained.reduce((a, b) => a + b, 0)).toBe(20);
  });

  it('still answers within seconds when one process does not, and says which one that is', async () => {
    const stopped = gatewayPid(hermod, 0)!;
    process.kill(stopped, 'SIGSTOP');
    try {
      const started = Date.now();
      const samples = await scrape();
      expect(Date.now() - started).toBeLessThan(6000);
      const up = new Map(samples.filter((s) => s.name === 'hermod_role_up').map((s) => [s.labels.process!, s.value]));
      expect(up.get('gateway-0')).toBe(0);
      expect(up.get('gateway-1')).toBe(1);
      expect(up.get('core')).toBe(1);
      expect(samples.some((s) => s.labels.process === 'core' && s.name === 'hermod_core_messages_total')).toBe(true);
      expect(samples.some((s) => s.labels.process === 'gateway-0' && s.name !== 'hermod_role_up')).toBe(false);
      // A scraper that waits 1 s (Prometheus scraping every second says so) is answered within it.
      const quick = Date.now();
      const r = await metrics.request('GET', '/metrics', { headers: { 'x-prometheus-scrape-timeout-seconds': '1' } });
      expect(Date.now() - quick).toBeLessThan(1000);
      expect(r.status).toBe(200);
      expect(samplesOf(r.text).find((s) => s.name === 'hermod_role_up' && s.labels.process === 'gateway-0')?.value).toBe(0);
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
  });
});
