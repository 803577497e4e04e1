import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSmscSimulator } from '../workers/simulators/smsc-simulator';
import { createClient } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermod } from './support/hermod-process';
import { deleteRedisKeys, REDIS_URL } from './support/redis-keys';

const STATUSES = ['accepted', 'queued', 'sent', 'submitted', 'received'];

interface Call {
  json: { id: string; status: string; reference?: string };
  eventId: string;
  answered: boolean;
}

/** A receiver on port 0 that, while holding, answers nothing: the callbacks it has are under way at hermod. */
async function startReceiver() {
  const calls: Call[] = [];
  const state = { holding: true };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const call = { json: JSON.parse(body), eventId: String(req.headers['x-hermod-event-id']), answered: !state.holding };
      calls.push(call);
      if (call.answered) res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    calls,
    state,
    port: (server.address() as { port: number }).port,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('callbacks under way when every hermod process is killed, on the Redis bus', () => {
  const prefix = `hermod-cbk-${randomUUID().slice(0, 8)}`;
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    await deleteRedisKeys(prefix);
  });

  it('delivers after kill -9 and a restart the callbacks whose bus records were acknowledged before their receiver answered', async () => {
    const receiver = await startReceiver();
    cleanup.push(receiver.close);
    const simulator = createSmscSimulator({ host: '127.0.0.1', port: 0, receiptDelayMs: 20 });
    const { port: smscPort } = await simulator.start();
    cleanup.push(() => simulator.stop());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hermod-callbacks-redis-crash-'));
    cleanup.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = {
      HERMOD_SMSC_SIMULATOR: 'false',
      HERMOD_SMPP_PORT: String(smscPort),
      HERMOD_GATEWAYS: '1',
      HERMOD_CALLBACK_ALLOW_PRIVATE: 'true',
      HERMOD_CALLBACK_TIMEOUT: '120s',
      HERMOD_BUS: 'redis',
      HERMOD_STATE: 'redis',
      HERMOD_REDIS_URL: REDIS_URL,
      HERMOD_REDIS_PREFIX: prefix,
      HERMOD_CORE_RUNS_WORKERS: 'true',
    };

    let hermod = await startHermod({ dataDir, env });
    const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://localhost:${receiver.port}/status`]);
    expect(set.code, set.output).toBe(0);
    let client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    const contents = ['Kia ora, e hoa mā — tēnā koe', '你好世界', 'Привет 👋🏽'];
    const ids: string[] = [];
    for (const [i, content] of contents.entries()) {
      const r = await client.post('/rest/sms/v2/messages', { destination: `+642900000${i}`, content, reference: `tūtohu-${i}` });
      expect(r.status, r.text).toBe(202);
      ids.push(r.json.id);
    }
    // Every message's first callback is at the receiver, unanswered: taken off the bus, not delivered.
    await eventually(async () => (ids.every((id) => receiver.calls.some((c) => c.json.id === id)) ? true : undefined));
    const underWay = new Set(receiver.calls.map((c) => c.eventId));
    client.close();
    await hermod.kill9();

    receiver.state.holding = false;
    hermod = await startHermod({ dataDir, env });
    cleanup.push(() => hermod.stop());
    client = createClient(hermod.baseUrl, hermod.ca(), { user: 'acme', pass: 'secret' });
    cleanup.push(async () => client.close());

    const delivered = () => receiver.calls.filter((c) => c.answered);
    await eventually(async () => {
      const complete = ids.every((id) => delivered().some((c) => c.json.id === id && c.json.status === 'received'));
      const events = new Set(delivered().map((c) => c.eventId));
      return complete && [...underWay].every((e) => events.has(e)) ? true : undefined;
    }, 60_000).catch((err) => {
      // Said whole on failure: what each message's receiver got, which callbacks under way never came, and hermod's warnings.
      const got = ids.map(
        (id) =>
          `${id}: ${receiver.calls
            .filter((c) => c.json.id === id)
            .map((c) => `${c.json.status}${c.answered ? '' : '(unanswered)'}`)
            .join(', ')}`,
      );
      const events = new Set(delivered().map((c) => c.eventId));
      const warnings = hermod
        .output()
        .split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l))
        .slice(-20);
      throw new Error(
        `${err}\n${got.join('\n')}\nunder way, never delivered: ${[...underWay].filter((e) => !events.has(e)).join(', ')}\n${warnings.join('\n')}`,
      );
    });
    for (const [i, id] of ids.entries()) {
      const statuses = [
        ...new Map(
          delivered()
            .filter((c) => c.json.id === id)
            .map((c) => [c.eventId, c.json]),
        ).values(),
      ];
      expect(statuses.map((s) => s.status)).toEqual(STATUSES);
      expect(statuses.every((s) => s.reference === `tūtohu-${i}`)).toBe(true);
    }
  });
});
