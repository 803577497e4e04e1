import { createHmac } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmscSimulator } from '../workers/simulators/smsc-simulator';
import type { Client } from './support/https-client';
import { eventually, type HermodProcess } from './support/hermod-process';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  answered: number;
}

describe('status and reply callbacks', () => {
  let hermod: HermodProcess;
  let client: Client;
  let simulator: SmscSimulator;
  let receiver: http.Server;
  let running: HermodWithSimulator;
  let secret = '';
  let failing = false;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const answered = failing ? 500 : 200;
        received.push({ path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body), answered });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as { port: number }).port;

    running = await startHermodWithSimulator('callbacks', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true' });
    ({ hermod, simulator, client } = running);
    const set = await hermod.cli(['apps', 'set-callbacks', 'acme', '--status', `http://hook:pa%24s@127.0.0.1:${port}/status`, '--reply', `http://127.0.0.1:${port}/reply`]);
    expect(set.code).toBe(0);
    secret = /signing secret: (\S+)/.exec(set.output)![1]!;
  });

  afterAll(async () => {
    await running?.stop();
    receiver?.close();
  });

  const statusesOf = (id: string) => received.filter((r) => r.path === '/status' && r.json.id === id && r.answered === 200);
  const validSignature = (r: Received): boolean => {
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-hermod-signature'])) ?? [];
    return v1 === createHmac('sha256', secret).update(`${t}.${r.body}`).digest('hex');
  };

  it('posts every status change of a message, in order, signed, with the credentials from the URL', async () => {
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6426000001', content: 'track me', reference: 'order-77' });
    const id = sent.json.id as string;
    await eventually(async () => (statusesOf(id).some((r) => r.json.status === 'received') ? true : undefined));
    const calls = statusesOf(id);
    expect(calls.map((c) => c.json.status)).toEqual(['accepted', 'queued', 'sent', 'submitted', 'received']);
    for (const c of calls) {
      expect(c.json).toEqual({ id, message_id: id, status: c.json.status, detail: '+6426000001', reference: 'order-77' });
      expect(validSignature(c)).toBe(true);
      expect(c.headers.authorization).toBe('Basic ' + Buffer.from('hook:pa$s').toString('base64'));
      expect(c.headers['x-hermod-event-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('retries while the receiver answers 500 and delivers later with the same event ids, still in order', async () => {
    failing = true;
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6426000002', content: 'retry me' });
    const id = sent.json.id as string;
    await eventually(async () => (received.filter((r) => r.json.id === id && r.answered === 500).length >= 2 ? true : undefined));
    failing = false;
    await eventually(async () => (statusesOf(id).some((r) => r.json.status === 'received') ? true : undefined), 30_000);
    const failedIds = new Set(received.filter((r) => r.json.id === id && r.answered === 500).map((r) => r.headers['x-hermod-event-id']));
    const deliveredIds = new Set(statusesOf(id).map((r) => r.headers['x-hermod-event-id']));
    for (const e of failedIds) expect(deliveredIds.has(e)).toBe(true);
    expect(statusesOf(id).map((c) => c.json.status)).toEqual(['accepted', 'queued', 'sent', 'submitted', 'received']);
  });

  it('posts a reply to the reply callback with reply_to naming the message it answers', async () => {
    const sent = await client.post('/rest/sms/v2/messages', { destination: '+6426000003', content: 'how was it?' });
    await eventually(async () => (statusesOf(sent.json.id).some((r) => r.json.status === 'received') ? true : undefined));
    await simulator.originate({ source: '+6426000003', destination: '4000', text: 'great, thanks' });
    const reply = await eventually(async () => received.find((r) => r.path === '/reply' && r.json.content === 'great, thanks'));
    expect(reply.json).toMatchObject({ id: expect.any(String), source: '+6426000003', content: 'great, thanks', reply_to: sent.json.id });
    expect(validSignature(reply)).toBe(true);
    const details = await client.get(`/rest/sms/v2/messages?id=${reply.json.id}`);
    expect(details.json).toMatchObject({ id: reply.json.id, direction: 'MO', source: '+6426000003', content: 'great, thanks' });
  });
});
