import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmscSimulator, type SmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermodWithSimulator } from './support/hermod-with-simulator';
import { startRole, type RoleProcess } from './support/role-process';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';

function members(count: number, prefix: string) {
  return Array.from({ length: count }, (_, n) => ({ destination: `+64${prefix}${String(n).padStart(6, '0')}`, param1: `Ānaru-${n} 👋🏽` }));
}

/** Counts what reaches the carrier, by destination. */
function countSubmits(simulator: SmscSimulator) {
  const byDestination = new Map<string, number>();
  const texts = new Map<string, string>();
  simulator.on('message', (m: { destination: string; text: string }) => {
    const to = m.destination.replace(/^\+/, '');
    byDestination.set(to, (byDestination.get(to) ?? 0) + 1);
    texts.set(to, m.text);
  });
  return {
    byDestination,
    texts,
    total: () => [...byDestination.values()].reduce((a, n) => a + n, 0),
  };
}

describe('campaign fan-out', () => {
  it('sends every member of a 10,000-member campaign exactly once and reports every message with its final status', async () => {
    const h = await startHermodWithSimulator('campaign-10k', { HERMOD_CAMPAIGN_PARTITION: '1000' });
    try {
      const submits = countSubmits(h.simulator);
      const list = members(10_000, '21');
      const created = await h.client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
        name: 'tekau mano — 一万',
        schedule: new Date().toISOString(),
        content: 'Kia ora {{param1}} — 你好, привет 🎉',
        members: list,
      });
      expect(created.status).toBe(201);
      const id = created.json.id as number;

      await eventually(async () => (submits.byDestination.size === list.length ? true : undefined), 90_000, 250);
      expect(submits.total()).toBe(list.length);
      expect(submits.texts.get('6421000042')).toBe('Kia ora Ānaru-42 👋🏽 — 你好, привет 🎉');

      const report = await eventually(
        async () => {
          const r = await h.client.get(`/rest/campaign_manager/v1/acme/${id}/report`);
          return r.status === 200 && r.json.length === list.length && r.json.every((row: { status: string }) => row.status === 'received') ? r.json : undefined;
        },
        60_000,
        500,
      );
      expect(new Set(report.map((r: { mobile: string }) => r.mobile)).size).toBe(list.length);
      expect(new Set(report.map((r: { message_id: number }) => r.message_id)).size).toBe(list.length);
      expect(report[0]).toMatchObject({ list_name: 'tekau mano — 一万', mobile: '+6421000000', status: 'received', timezone: '+00:00' });
      expect(report[0].sent_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/);
      expect(Date.parse(report[0].status_date)).toBeGreaterThanOrEqual(Date.parse(report[0].sent_date));
    } finally {
      await h.stop();
    }
  }, 180_000);

  describe('when core is killed in the middle of a fan-out', () => {
    const processes: RoleProcess[] = [];
    const prefix = randomPrefix('cf');
    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
      await deleteRedisKeys(prefix);
    });

    it('resumes after a restart and every member still gets exactly one message', async () => {
      const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
      const { port: smscPort } = await simulator.start();
      const submits = countSubmits(simulator);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cf-'));
      const env = {
        HERMOD_BUS: 'redis',
        HERMOD_STATE: 'redis',
        HERMOD_REDIS_URL: REDIS_URL,
        HERMOD_REDIS_PREFIX: prefix,
        HERMOD_BUS_PARTITIONS: '4',
        HERMOD_DATA_DIR: dataDir,
        HERMOD_CORE_ADDRESS: '127.0.0.1:0',
        HERMOD_METRICS_PORT: '0',
        HERMOD_HOST: '127.0.0.1',
        HERMOD_SMPP_PORT: String(smscPort),
        HERMOD_SMPP_WINDOW: '16',
        HERMOD_BOOTSTRAP_APP: 'acme',
        HERMOD_BOOTSTRAP_PASSWORD: 'secret',
        // Small partitions and a short backlog: the fan-out is spread over many steps, so the kill lands inside it.
        HERMOD_CAMPAIGN_PARTITION: '500',
        HERMOD_CAMPAIGN_MAX_BACKLOG: '300',
      };
      // Core binds port 0 the first time; the gateway is given the port it got, and the restarted core asks for that one again.
      let core = await startRole(['core'], env, '"msg":"core listening"');
      const coreAddress: string = core.ready.grpc;
      const startCore = () => startRole(['core'], { ...env, HERMOD_CORE_ADDRESS: coreAddress }, '"msg":"core listening"');
      for (let i = 0; i < 2; i++) processes.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
      const gateway = await startRole(
        ['gateway'],
        { ...env, HERMOD_CORE_ADDRESS: coreAddress, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
        '"msg":"gateway listening"',
      );
      processes.push(gateway);
      const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), {
        user: 'acme',
        pass: 'secret',
      });

      const list = members(10_000, '22');
      const created = await client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
        name: 'kua haukotia — прервано',
        schedule: new Date().toISOString(),
        content: 'He tuku motuhake mōu, {{param1}} — 特价 🎁',
        members: list,
      });
      expect(created.status).toBe(201);

      await eventually(async () => (submits.byDestination.size >= 2500 ? true : undefined), 60_000, 20);
      await core.kill9();
      const atKill = submits.byDestination.size;
      core = await startCore();
      processes.push(core);

      await eventually(async () => (submits.byDestination.size === list.length ? true : undefined), 120_000, 250);
      // Let anything sent twice arrive before counting.
      await new Promise((r) => setTimeout(r, 2000));
      const duplicates = submits.total() - submits.byDestination.size;
      console.log(
        `campaign across a core kill: ${list.length} members, ${atKill} had their message when core was killed, ${submits.byDestination.size} reached the simulator, ${duplicates} duplicates`,
      );
      expect(atKill).toBeLessThan(list.length);
      expect(submits.byDestination.size).toBe(list.length);
      expect(duplicates).toBe(0);
      client.close();
      await simulator.stop();
    }, 240_000);
  });
});
