import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from './support/https-client';
import { eventually } from './support/eventually';
import { startHermodWithSimulator, type HermodWithSimulator } from './support/hermod-with-simulator';

const STATUSES = ['accepted', 'queued', 'sent', 'submitted', 'received'];

interface Call {
  json: { id: string; status: string; reference?: string };
  eventId: string;
}

/**
 * A callback receiver on port 0, named by host name. With `hold`, it answers
 * nothing until `release()`: every request it has is then still pending at
 * hermod, which is what a receiver taking seconds looks like from there.
 */
async function startReceiver(hold: boolean) {
  const calls: Call[] = [];
  const held: http.ServerResponse[] = [];
  let holding = hold;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      calls.push({ json: JSON.parse(body), eventId: String(req.headers['x-hermod-event-id']) });
      if (holding) held.push(res);
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    calls,
    held,
    url: `http://localhost:${(server.address() as { port: number }).port}/status`,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.writeHead(200).end();
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('callbacks of one application while another application’s receiver is slow', () => {
  let running: HermodWithSimulator;
  let slow: Awaited<ReturnType<typeof startReceiver>>;
  let fast: Awaited<ReturnType<typeof startReceiver>>;
  let kiwi: Client;

  beforeAll(async () => {
    slow = await startReceiver(true);
    fast = await startReceiver(false);
    // Held callbacks must not time out while the test looks at them.
    running = await startHermodWithSimulator('callback-isolation', { HERMOD_CALLBACK_ALLOW_PRIVATE: 'true', HERMOD_CALLBACK_TIMEOUT: '120s' });
    const { hermod } = running;
    const created = await hermod.cli(['apps', 'create', 'kiwi', '--password', 'kō-secret-🥝']);
    expect(created.code, created.output).toBe(0);
    for (const [app, receiver] of [
      ['acme', slow],
      ['kiwi', fast],
    ] as const) {
      const set = await hermod.cli(['apps', 'set-callbacks', app, '--status', receiver.url]);
      expect(set.code, set.output).toBe(0);
    }
    kiwi = createClient(hermod.baseUrl, hermod.ca(), { user: 'kiwi', pass: 'kō-secret-🥝' });
  });

  afterAll(async () => {
    kiwi?.close();
    slow?.release();
    await running?.stop();
    await slow?.close();
    await fast?.close();
  });

  it('delivers every callback of an application at once while another application’s receiver has not answered its callbacks', async () => {
    // Enough messages of the slow application that their callbacks are under way on every partition of the callbacks topic.
    const slowIds: string[] = [];
    for (let i = 0; i < 64; i++) {
      const r = await running.client.post('/rest/sms/v2/messages', {
        destination: `+64211${String(i).padStart(5, '0')}`,
        content: `Kia ora, e hoa mā — tēnā koe 👋🏽 ${i}`,
        reference: `tōmuri-${i}`,
      });
      expect(r.status, r.text).toBe(202);
      slowIds.push(r.json.id);
    }
    // The first callback to a receiver waits up to a second for its answer (which may announce a rate), then the rest go.
    await eventually(async () => (slow.held.length >= 8 ? true : undefined));

    const sent = await kiwi.post('/rest/sms/v2/messages', { destination: '+64212000001', content: '你好世界 — 快 🥝', reference: 'tere-1' });
    expect(sent.status, sent.text).toBe(202);
    const id = sent.json.id as string;
    await eventually(async () => (fast.calls.some((c) => c.json.id === id && c.json.status === 'received') ? true : undefined), 30_000);
    expect(fast.calls.filter((c) => c.json.id === id).map((c) => c.json.status)).toEqual(STATUSES);
    // The slow application's callbacks are still waiting for their receiver: none of them has been answered.
    expect(slow.held.length).toBeGreaterThan(0);
    expect(slow.calls.every((c) => slowIds.includes(c.json.id))).toBe(true);

    // Once its receiver answers, the slow application gets all of its callbacks, each message's in order.
    slow.release();
    await eventually(async () => (slowIds.every((s) => slow.calls.some((c) => c.json.id === s && c.json.status === 'received')) ? true : undefined), 60_000);
    for (const s of slowIds) {
      const firstOfEach = [...new Map(slow.calls.filter((c) => c.json.id === s).map((c) => [c.eventId, c.json.status])).values()];
      expect(firstOfEach).toEqual(STATUSES);
    }
  });
});
