import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from './support/eventually';
import { freePort } from './support/free-port';
import { startRole, type RoleProcess } from './support/role-process';

const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/**
 * An SMS worker started on `adapters` (the bus and state variables) against
 * a carrier that counts its logins (connections) and closes each, so the
 * worker keeps trying; `waiting` turns true once the worker's output says
 * `waitingSays`.
 */
async function workerBesideCountingSmsc(adapters: Record<string, string>, waitingSays: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-worker-waits-'));
  cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const seen = { logins: 0, waiting: false };
  const smsc = net.createServer((socket) => {
    seen.logins++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => smsc.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => smsc.close());
  const env = {
    HERMOD_DATA_DIR: dataDir,
    HERMOD_METRICS_PORT: '0',
    HERMOD_SMPP_HOST: '127.0.0.1',
    HERMOD_SMPP_PORT: String((smsc.address() as net.AddressInfo).port),
    ...adapters,
  };
  let worker: RoleProcess | undefined;
  const starting = startRole(['worker', '--channel', 'sms'], env, '"channel worker started"', (output) => {
    seen.waiting ||= output.includes(waitingSays);
  }).then((w) => (worker = w));
  cleanup.push(() => worker?.stop());
  starting.catch(() => undefined);
  return { seen, starting };
}

/**
 * A worker started before its Redis waits for it, as core does, before it
 * logs in to the carrier: a bind it cannot use (no jobs, no receipts stored)
 * would only hold one of the carrier's few login slots.
 */
describe('an SMS worker started before its Redis', () => {
  it('logs in to the SMSC only once hot state answers (trial: it bound the carrier with Redis away)', async () => {
    const redisPort = await freePort();
    const { seen, starting } = await workerBesideCountingSmsc(
      { HERMOD_BUS: 'redis', HERMOD_STATE: 'redis', HERMOD_REDIS_URL: `redis://127.0.0.1:${redisPort}`, HERMOD_REDIS_PREFIX: `kāinga-${redisPort}` },
      'still waiting for Redis',
    );
    await eventually(async () => (seen.waiting ? true : undefined), 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(seen.logins).toBe(0);

    const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    cleanup.push(() => redis.kill('SIGKILL'));
    await starting;
    await eventually(() => (seen.logins > 0 ? true : undefined), 20_000);
  }, 120_000);
});

describe('an SMS worker started before its Kafka brokers answer', () => {
  it('does not log in to the SMSC while the bus is out of reach: a bind whose receipts it cannot pass on would only be refused them (trial)', async () => {
    const brokerPort = await freePort();
    const { seen } = await workerBesideCountingSmsc(
      { HERMOD_BUS: 'kafka', HERMOD_KAFKA_BROKERS: `127.0.0.1:${brokerPort}`, HERMOD_STATE: 'redis', HERMOD_REDIS_PREFIX: `kāinga-kafka-${brokerPort}` },
      'the bus does not answer yet',
    );
    // Told after the first read of the bus has failed (Kafka's client tries for some 8 s): a worker that does not wait
    // binds within a second of its start.
    await eventually(async () => (seen.waiting ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen.logins).toBe(0);
  }, 60_000);
});
