import { credentials } from '@grpc/grpc-js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CampaignControlClient, type CampaignProgress, type CampaignRef } from '../proto/gen/hermod/v1/campaign_control';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { createClient } from './support/https-client';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';
import { startRole, type RoleProcess } from './support/role-process';

const MEMBERS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('campaign control across processes on Redis', () => {
  const processes: RoleProcess[] = [];
  const prefix = randomPrefix('cc');
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop().catch(() => undefined)));
    await deleteRedisKeys(prefix);
  });

  it('a pause said to core stops the SMS workers of two other processes within a second, and resume sends everyone exactly once', async () => {
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20, submitRespDelayMs: 40 });
    const { port: smscPort } = await simulator.start();
    const byDestination = new Map<string, number>();
    simulator.on('message', (m: { destination: string }) => byDestination.set(m.destination, (byDestination.get(m.destination) ?? 0) + 1));
    const total = () => [...byDestination.values()].reduce((a, n) => a + n, 0);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-cc-'));
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
      HERMOD_CAMPAIGN_PARTITION: '2000',
    };
    const core = await startRole(['core'], env, '"msg":"core listening"');
    processes.push(core);
    const coreAddress: string = core.ready.grpc;
    for (let i = 0; i < 2; i++) processes.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: coreAddress, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    processes.push(gateway);
    const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    const grpc = new CampaignControlClient(coreAddress, credentials.createInsecure());
    const control = (verb: 'pauseCampaign' | 'resumeCampaign' | 'showCampaign', ref: CampaignRef) =>
      new Promise<CampaignProgress>((resolve, reject) => grpc[verb](ref, (err, res) => (err ? reject(err) : resolve(res))));
    try {
      const created = await client.post('/rest/campaign_manager/v1/acme/scheduled_campaigns', {
        name: 'Tātou katoa — 大家',
        schedule: new Date().toISOString(),
        content: 'Kia ora {{param1}} — 你好 👋🏽',
        members: Array.from({ length: MEMBERS }, (_, n) => ({ destination: `+6423${String(n).padStart(6, '0')}`, param1: `Hine-${n}` })),
      });
      expect(created.status, created.text).toBe(201);
      const ref = { application: 'acme', campaignId: String(created.json.id) };
      await eventually(async () => (byDestination.size >= 300 ? true : undefined), 60_000, 20);

      expect((await control('pauseCampaign', ref)).state).toBe('paused');
      await sleep(1000);
      const atOneSecond = total();
      await sleep(3000);
      console.log(
        `pause on Redis: ${atOneSecond} submits 1 s after pause, ${total()} 3 s later (load ${os
          .loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')})`,
      );
      expect(total()).toBe(atOneSecond);
      expect(atOneSecond).toBeLessThan(MEMBERS);

      expect((await control('resumeCampaign', ref)).state).toBe('running');
      const resumedAt = Date.now();
      await eventually(async () => (byDestination.size === MEMBERS ? true : undefined), 240_000, 250).catch((err: unknown) => {
        const logs = processes.map((p) =>
          p
            .output()
            .split('\n')
            .filter((l) => /campaign|"level":"(error|warn)"/.test(l))
            .slice(-8)
            .join('\n'),
        );
        console.log(`after resume: ${byDestination.size} of ${MEMBERS} reached the carrier\n${logs.join('\n')}`);
        throw err;
      });
      console.log(`resume on Redis: the other ${MEMBERS - atOneSecond} members reached the carrier in ${Date.now() - resumedAt} ms`);
      await sleep(2000);
      expect(total()).toBe(MEMBERS);
      const done = await eventually(
        async () => {
          const p = await control('showCampaign', ref);
          return p.delivered === MEMBERS ? p : undefined;
        },
        60_000,
        500,
      );
      expect(done).toMatchObject({ state: 'finished', submitted: MEMBERS, dead: 0, remaining: 0 });
    } finally {
      grpc.close();
      client.close();
      await simulator.stop();
    }
  }, 420_000);
});
