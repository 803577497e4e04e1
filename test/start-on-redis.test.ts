import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { startHermod } from './support/hermod-process';
import { expectImEmailAndWhatsAppFinal } from './support/im-final-statuses';
import { eventually } from './support/eventually';
import { startHermodWithChannels, type HermodWithChannels } from './support/hermod-with-channels';
import { deleteRedisKeys, randomPrefix, REDIS_URL } from './support/redis-keys';
import { samplesOf } from './support/metric-samples';

describe('hermod start on the Redis bus and Redis state', () => {
  let h: HermodWithChannels;
  let basic: Client;
  const prefix = randomPrefix('start');

  beforeAll(async () => {
    h = await startHermodWithChannels('start-redis', {
      env: { HERMOD_BUS: 'redis', HERMOD_STATE: 'redis', HERMOD_REDIS_URL: REDIS_URL, HERMOD_REDIS_PREFIX: prefix, HERMOD_BUS_PARTITIONS: '4' },
    });
    basic = createClient(h.hermod.baseUrl, h.hermod.ca(), { user: 'acme', pass: 'secret' });
  }, 120_000);

  afterAll(async () => {
    basic?.close();
    await h?.stop();
    await deleteRedisKeys(prefix);
  }, 60_000);

  it('delivers an SMS sent through v2 all the way to received, without any worker started by hand', async () => {
    const sent = await basic.post('/rest/sms/v2/messages', { destination: '+6421000201', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽' });
    expect(sent.status, sent.text).toBe(202);
    const done = await eventually(
      async () => {
        const r = await basic.get(`/rest/sms/v2/messages?id=${sent.json.id}`);
        return r.json?.status === 'received' ? r : undefined;
      },
      60_000,
      200,
    );
    expect(done.json).toMatchObject({ id: sent.json.id, status: 'received', content: 'Kia ora, e hoa mā — tēnā koe 👋🏽' });
  }, 90_000);

  it('runs the SMS workers in a process of their own and the quieter channels together in one more', () => {
    const running = h.hermod
      .output()
      .split('\n')
      .map((line) => (line.startsWith('{') ? JSON.parse(line) : {}))
      .find((l) => l.msg === 'hermod is running');
    expect(running.workers).toEqual(['sms', 'email,wab,rcs,mms']);
  });

  it("serves each metric from the processes that make it: an SMS receipt's latency from the SMS workers alone, none from core or the other channels' workers", async () => {
    const text = await (await fetch(`http://127.0.0.1:${h.hermod.metricsPort}/metrics`)).text();
    const servedBy = (name: string) =>
      [
        ...new Set(
          samplesOf(text)
            .filter((s) => s.name.startsWith(name))
            .map((s) => s.labels.process),
        ),
      ].sort();
    expect(servedBy('hermod_smpp_receipt_latency_seconds')).toEqual(['worker-sms']);
    expect(servedBy('hermod_callbacks_owed')).toEqual(['core']);
  });

  it('carries an Intelligent Messaging e-mail and a WhatsApp message to a final status', async () => {
    await expectImEmailAndWhatsAppFinal(h, '+6421100201');
  }, 90_000);
});

describe('hermod start with a combination that cannot work', () => {
  it('refuses the Redis bus with in-process hot state, naming the fix, instead of leaving messages queued', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-start-refused-'));
    try {
      const outcome = await startHermod({
        dataDir,
        env: { HERMOD_BUS: 'redis', HERMOD_STATE: 'memory', HERMOD_REDIS_URL: REDIS_URL, HERMOD_REDIS_PREFIX: randomPrefix('refused') },
      }).then(
        async (started) => {
          await started.stop();
          return 'it started';
        },
        (err: Error) => err.message,
      );
      expect(outcome).toMatch(/exited with 2[\s\S]*configuration error[\s\S]*HERMOD_STATE=redis[\s\S]*HERMOD_CORE_RUNS_WORKERS=true/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
