import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';
import { eventually } from './support/eventually';
import { freePort } from './support/free-port';
import { createClient } from './support/https-client';
import { startRole, type RoleProcess } from './support/role-process';
import { startRedisServer } from './support/redis-server';

/**
 * The Redis bus and Redis state on one Redis, which comes back without its data (no persistence, as an operator may
 * run it): the jobs its streams held for the workers went with it. Nothing answered 202 may be lost with them.
 */
describe('a Redis that carries the bus and hot state and comes back empty', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await Promise.resolve(c()).catch(() => undefined);
  });

  it('hands every message that was waiting for a worker to its channel again, so each still reaches the carrier', async () => {
    const redisPort = await freePort();
    let redis = await startRedisServer(redisPort);
    cleanup.push(() => redis.kill('SIGKILL'));
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 10 });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const submitted = new Set<string>();
    simulator.on('submit', (s: { text: string }) => submitted.add(s.text));
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-redis-empty-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      HERMOD_REDIS_PREFIX: 'tēnā',
      HERMOD_BUS_PARTITIONS: '2',
      HERMOD_DATA_DIR: dataDir,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_METRICS_PORT: '0',
      HERMOD_HOST: '127.0.0.1',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_BOUNCE_SMTP_PORT: '0',
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    };
    const roles: RoleProcess[] = [];
    cleanup.push(() => Promise.all(roles.map((r) => r.stop())));
    // No SMS worker yet: the messages wait on the bus's stream for one.
    const core = await startRole(['core'], env, '"msg":"core listening"');
    roles.push(core);
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    roles.push(gateway);
    const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    cleanup.push(() => client.close());
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Tēnā koe — नमस्ते'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100077${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }

    // Redis stops and comes back empty, its streams gone with the messages on them.
    redis.kill('SIGKILL');
    await once(redis, 'exit');
    redis = await startRedisServer(redisPort);
    await eventually(() => (core.output().includes('hot state lost data') ? true : undefined), 30_000);

    roles.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
    await eventually(() => (texts.every((t) => submitted.has(t)) ? true : undefined), 60_000, 200);
    for (const id of ids)
      await eventually(async () => ((await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status === 'received' ? true : undefined), 30_000, 200);
  }, 180_000);

  it('asks the SMSC about the messages whose delivery receipts went with its streams, so each still ends received', async () => {
    const redisPort = await freePort();
    let redis = await startRedisServer(redisPort);
    cleanup.push(() => redis.kill('SIGKILL'));
    // Receipts a moment after the submits: time to stop core before they come.
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 1500 });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-redis-receipts-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      HERMOD_BUS_PARTITIONS: '2',
      HERMOD_DATA_DIR: dataDir,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_METRICS_PORT: '0',
      HERMOD_HOST: '127.0.0.1',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_BOUNCE_SMTP_PORT: '0',
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    };
    const roles: RoleProcess[] = [];
    cleanup.push(() => Promise.all(roles.map((r) => r.stop())));
    const core = await startRole(['core'], env, '"msg":"core listening"');
    roles.push(core);
    // Stopped by a signal, it is woken for the others to stop it.
    cleanup.push(() => process.kill(core.pid, 'SIGCONT'));
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    roles.push(gateway);
    roles.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
    const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    cleanup.push(() => client.close());
    // A long one in three parts (UCS-2 for its macrons): a receipt for each part, each asked about.
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Tēnā koutou katoa, ngā mihi nui ki a koutou — '.repeat(4)];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100088${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    const statusOf = async (id: string) => (await client.get(`/rest/sms/v2/messages?id=${id}`)).json?.status;
    for (const id of ids) await eventually(async () => ((await statusOf(id)) === 'submitted' ? true : undefined), 30_000, 50);
    const submits = simulator.submitCount;
    expect(submits).toBeGreaterThanOrEqual(5);

    // Core stops reading; the receipts come, the worker puts them on the status stream and the SMSC is told they
    // are safe. Then Redis comes back empty, and they are gone with the stream.
    process.kill(core.pid, 'SIGSTOP');
    await eventually(() => (simulator.receiptCount >= submits ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    redis.kill('SIGKILL');
    await once(redis, 'exit');
    redis = await startRedisServer(redisPort);
    process.kill(core.pid, 'SIGCONT');
    await eventually(() => (core.output().includes('hot state lost data') ? true : undefined), 30_000);

    for (const id of ids) await eventually(async () => ((await statusOf(id)) === 'received' ? true : undefined), 60_000, 200);
    // Asked, not sent again.
    expect(simulator.submitCount).toBe(submits);
    expect(core.output()).toContain('asking the carriers about messages whose delivery receipts may be lost');
  }, 180_000);
  it('asks the SMSC too when Redis came back empty while core was down, so receipts that went with it still end received', async () => {
    const redisPort = await freePort();
    let redis = await startRedisServer(redisPort);
    cleanup.push(() => redis.kill('SIGKILL'));
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 1500 });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-redis-down-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      HERMOD_BUS_PARTITIONS: '2',
      HERMOD_DATA_DIR: dataDir,
      HERMOD_CORE_ADDRESS: '127.0.0.1:0',
      HERMOD_METRICS_PORT: '0',
      HERMOD_HOST: '127.0.0.1',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_BOUNCE_SMTP_PORT: '0',
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    };
    const roles: RoleProcess[] = [];
    cleanup.push(() => Promise.all(roles.map((r) => r.stop())));
    let core = await startRole(['core'], env, '"msg":"core listening"');
    roles.push(core);
    const worker = await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"');
    roles.push(worker);
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    const texts = ['Kia ora, e hoa mā 👋🏽', '你好，世界', 'Ngā mihi — 🌿'];
    const ids: string[] = [];
    for (const [i, content] of texts.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642100099${i}`, content });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    const statusOf = async (c: typeof client, id: string) => (await c.get(`/rest/sms/v2/messages?id=${id}`)).json?.status;
    for (const id of ids) await eventually(async () => ((await statusOf(client, id)) === 'submitted' ? true : undefined), 30_000, 50);
    const submits = simulator.submitCount;
    client.close();
    await gateway.stop();

    // Core is stopped for an upgrade; the receipts come meanwhile and wait on the status stream. Redis restarts
    // without its data before core is back: the receipts, and every marker core left, are gone.
    await core.stop();
    await eventually(() => (simulator.receiptCount >= submits ? true : undefined), 30_000, 50);
    await new Promise((r) => setTimeout(r, 300));
    redis.kill('SIGKILL');
    await once(redis, 'exit');
    redis = await startRedisServer(redisPort);

    core = await startRole(['core'], env, '"msg":"core listening"');
    roles.push(core);
    const again = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    roles.push(again);
    const client2 = createClient(again.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), { user: 'acme', pass: 'secret' });
    cleanup.push(() => client2.close());
    for (const id of ids) await eventually(async () => ((await statusOf(client2, id)) === 'received' ? true : undefined), 60_000, 200);
    expect(simulator.submitCount).toBe(submits);
  }, 180_000);
});
