import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient } from './support/https-client';
import { eventually } from './support/eventually';
import { randomPrefix, deleteRedisKeys, REDIS_URL } from './support/redis-keys';
import { startRole, type RoleProcess } from './support/role-process';

const ROOT = path.resolve(import.meta.dirname, '..');
const MESSAGES = 300;

/** A status callback receiver on `localhost`, answering 200 at once. */
async function startReceiver() {
  const calls: { id: string; status: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      calls.push(JSON.parse(body));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    calls,
    url: `http://localhost:${(server.address() as { port: number }).port}/kua-tae`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('delivery receipts an SMSC sends on another SMS worker process’s bind', () => {
  const prefix = randomPrefix('other-bind');
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    await deleteRedisKeys(prefix);
  });

  it('still give every message its callbacks in order, submitted before received, though the receipt came at once', async () => {
    const receiver = await startReceiver();
    cleanup.push(receiver.close);
    // Each receipt at once, on the system_id's binds in turn: mostly another process's than the submit's.
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 0, receiptsOn: 'any' });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-other-bind-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
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
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
      HERMOD_BOOTSTRAP_APP: 'acme',
      HERMOD_BOOTSTRAP_PASSWORD: 'secret',
    };
    const roles: RoleProcess[] = [];
    cleanup.push(async () => Promise.all(roles.map((r) => r.stop())));
    const core = await startRole(['core'], env, '"msg":"core listening"');
    roles.push(core);
    for (let i = 0; i < 2; i++) roles.push(await startRole(['worker', '--channel', 'sms'], env, '"msg":"channel worker started"'));
    const gateway = await startRole(
      ['gateway'],
      { ...env, HERMOD_CORE_ADDRESS: core.ready.grpc, HERMOD_HTTPS_PORT: '0', HERMOD_HTTP_PORT: '0' },
      '"msg":"gateway listening"',
    );
    roles.push(gateway);
    const set = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const c = spawn(process.execPath, [path.join(ROOT, 'bin/hermod.js'), 'apps', 'set-callbacks', 'acme', '--status', receiver.url], {
        cwd: ROOT,
        env: { ...process.env, ...env, HERMOD_CORE_ADDRESS: core.ready.grpc },
      });
      let output = '';
      c.stdout.on('data', (d: Buffer) => (output += d.toString()));
      c.stderr.on('data', (d: Buffer) => (output += d.toString()));
      c.on('exit', (code) => resolve({ code, output }));
    });
    expect(set.code, set.output).toBe(0);
    // Both workers bound before the first send, so receipts have two binds to go to.
    await eventually(() => (simulator.sessions().length >= 2 ? true : undefined), 30_000);

    const client = createClient(gateway.ready.https, fs.readFileSync(path.join(dataDir, 'tls/self-signed.crt'), 'utf8'), {
      user: 'acme',
      pass: 'secret',
    });
    cleanup.push(async () => client.close());
    const texts = ['Kia ora, e hoa mā', '你好，世界', 'Tēnā koe 👋🏽'];
    const ids: string[] = [];
    for (let i = 0; i < MESSAGES; i += 50) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client.post('/rest/sms/v2/messages', { destination: `+6421${String(i + j).padStart(6, '0')}`, content: texts[(i + j) % 3] }),
        ),
      );
      for (const r of replies) {
        expect(r.status, r.text).toBe(202);
        ids.push(r.json.id);
      }
    }

    const statusesOf = (id: string) => receiver.calls.filter((c) => c.id === id).map((c) => c.status);
    // Said whole on failure: how many messages' callbacks came in each order.
    const orders = () => {
      const counts = new Map<string, number>();
      for (const id of ids) counts.set(statusesOf(id).join(' → '), (counts.get(statusesOf(id).join(' → ')) ?? 0) + 1);
      return JSON.stringify([...counts]);
    };
    await eventually(() => (ids.every((id) => statusesOf(id).includes('received')) ? true : undefined), 60_000).catch((err) => {
      throw new Error(`${err}; callbacks per message: ${orders()}`);
    });
    await new Promise((r) => setTimeout(r, 500)); // a late callback would show now
    const wrong = ids.map((id) => statusesOf(id).join(' → ')).filter((s) => s !== 'accepted → queued → sent → submitted → received');
    expect(wrong.slice(0, 5), `${wrong.length} of ${MESSAGES} messages: ${JSON.stringify(wrong.slice(0, 5))}`).toEqual([]);
  });
});
